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
  assert.deepEqual(Object.keys(manifest.exports['./init']), ['types', 'default']);
  assert.equal(manifest.type, 'module');
  // Only the entries have a side effect: loading the wasm.
  assert.deepEqual(manifest.sideEffects, ['./dist/browser.js', './dist/node.js', './dist/deno.js', './dist/workerd.js']);
});

test('every file the exports map names is in the installed package', () => {
  const paths = [manifest.types];
  const walk = (value) => (typeof value === 'string' ? paths.push(value) : Object.values(value).forEach(walk));
  walk(manifest.exports);
  assert.ok(paths.length >= 11, String(paths.length));
  for (const path of paths) assert.ok(existsSync(join(root, path)), path);
  for (const file of ['api.js', 'glue.js', 'noise_filter_bg.wasm']) assert.ok(existsSync(join(root, 'dist', file)), file);
});

test('require("noise-filter") loads the same API (require of ESM, Node >= 20.19)', () => {
  const nf = require('noise-filter');
  assert.equal(typeof nf.createHandler, 'function');
  assert.equal(nf.Matcher.builtin().isNoise('x'), false);
});
