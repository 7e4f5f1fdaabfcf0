// What only Node can check: the installed package's manifest and files, and
// loading it through `require`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = dirname(fileURLToPath(import.meta.resolve('noise-filter/package.json')));
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

test('the exports map lists types first, then workerd, deno, node, browser, default', () => {
  assert.deepEqual(Object.keys(manifest.exports['.']), ['types', 'workerd', 'deno', 'node', 'browser', 'default']);
  assert.deepEqual(Object.keys(manifest.exports['./matcher']), ['types', 'workerd', 'deno', 'node', 'browser', 'default']);
  assert.deepEqual(Object.keys(manifest.exports['./init']), ['types', 'default']);
  assert.deepEqual(Object.keys(manifest.exports['./matcher/init']), ['types', 'default']);
  assert.equal(manifest.type, 'module');
  // Only the entries have a side effect: loading the wasm.
  assert.deepEqual(manifest.sideEffects, [
    './dist/browser.js',
    './dist/node.js',
    './dist/deno.js',
    './dist/workerd.js',
    './dist/matcher-browser.js',
    './dist/matcher-node.js',
    './dist/matcher-deno.js',
    './dist/matcher-workerd.js',
  ]);
});

test('every file the exports map names is in the installed package', () => {
  const paths = [manifest.types];
  const walk = (value) => (typeof value === 'string' ? paths.push(value) : Object.values(value).forEach(walk));
  walk(manifest.exports);
  assert.ok(paths.length >= 18, String(paths.length));
  for (const path of paths) assert.ok(existsSync(join(root, path)), path);
  for (const file of ['api.js', 'glue.js', 'noise_filter_bg.wasm', 'matcher-api.js', 'matcher-glue.js', 'noise_filter_matcher_bg.wasm']) assert.ok(existsSync(join(root, 'dist', file)), file);
});

test('require("noise-filter") loads the same API (require of ESM, Node >= 20.19)', () => {
  const nf = require('noise-filter');
  assert.equal(typeof nf.createHandler, 'function');
  assert.equal(nf.Matcher.builtin().isNoise('x'), false);
  assert.equal(require('noise-filter/matcher').Matcher.builtin().isNoise('Googlebot/2.1'), true);
});

/** What `noise-filter/matcher` exports, its `/init` form too. */
const MATCHER_EXPORTS = [
  'DEFAULT_HOLD_MS',
  'Matcher',
  'bugsnagOnError',
  'createBeforeSend',
  'createClient',
  'datadogBeforeSend',
  'honeybadgerBeforeNotify',
  'init',
  'noiseFilterIntegration',
  'parseStack',
  'posthogBeforeSend',
  'rollbarCheckIgnore',
  'toEvent',
];

test('the matcher entry is smaller than the main entry and leaves the handler out', async () => {
  const size = (file) => readFileSync(join(root, 'dist', file)).length;
  assert.ok(size('noise_filter_matcher_bg.wasm') < size('noise_filter_bg.wasm') * 0.75);
  const matcher = await import('noise-filter/matcher');
  assert.deepEqual(Object.keys(matcher).sort(), MATCHER_EXPORTS);
});

test('noise-filter/matcher/init loads without waiting for the wasm, and matches once init() resolves', async () => {
  const lazy = await import('noise-filter/matcher/init');
  assert.deepEqual(Object.keys(lazy).sort(), MATCHER_EXPORTS);
  // Node's fetch cannot read file: URLs; Node callers hand over the bytes.
  const bytes = readFileSync(join(root, 'dist', 'noise_filter_matcher_bg.wasm'));
  const first = lazy.init(bytes);
  assert.equal(lazy.init(), first, 'one load, whatever the later calls pass');
  await first;
  const matcher = lazy.Matcher.builtin();
  assert.equal(matcher.isNoise('Googlebot/2.1'), true);
  assert.equal(matcher.isNoise({ message: 'TypeError: invoice total is negative' }), false);
  matcher.free();
});
