// A wasm that does not load never stops the importing program: the import
// succeeds, the matcher's constructors say why, a client matches nothing and
// tells its onError, the Sentry integration (with the real @sentry/node)
// and createBeforeSend let every event through. The steps share one
// `noise-filter/matcher/init` module, whose wasm fails, then loads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as Sentry from '@sentry/node';
import { recordingTransport } from '../common/sentry-transport.mjs';
import { Matcher, createBeforeSend, createClient, init, noiseFilterIntegration } from 'noise-filter/matcher/init';

const wallet = () => new TypeError('Cannot redefine property: ethereum');
const real = () => new Error('invoice total is negative');
const value = (event) => event.exception?.values?.[0]?.value ?? event.message;
const NOT_WASM = new Uint8Array([0x3c, 0x21, 0x64, 0x6f, 0x63]); // `<!doc`: what a CDN's error page starts with
const wasmBytes = readFileSync(fileURLToPath(import.meta.resolve('noise-filter/noise_filter_matcher_bg.wasm')));

async function sentry(integration) {
  await Sentry.close(2000);
  const events = [];
  Sentry.init({
    dsn: 'https://public@sentry.example.invalid/1',
    transport: recordingTransport(events),
    defaultIntegrations: false,
    integrations: [integration],
  });
  return events;
}

test('a wasm that does not load: reported, and every event passes; once it loads, noise is dropped', async () => {
  // A client made before the wasm, as a page does; its fetch fails too (nothing listens there).
  const clientErrors = [];
  const client = createClient({ url: 'http://127.0.0.1:9', key: 'nf_' + '0'.repeat(48), refresh: false, onError: (e) => clientErrors.push(e) });
  assert.equal(client.isNoise(wallet()), false, 'no wasm yet: nothing is noise');

  const loading = init(NOT_WASM);
  await assert.rejects(loading, WebAssembly.CompileError);
  assert.throws(() => Matcher.builtin(), (error) => {
    assert.match(error.message, /^noise-filter: the wasm did not load: /);
    assert.ok(error.cause instanceof WebAssembly.CompileError);
    return true;
  });
  assert.throws(() => client.matcher, /the wasm did not load/);
  await client.ready;
  assert.equal(client.isNoise(wallet()), false);
  assert.deepEqual(client.classify(wallet()), { noise: false, matches: [] });
  const compileErrors = clientErrors.filter((e) => e instanceof WebAssembly.CompileError);
  assert.equal(compileErrors.length, 1, 'the client told its onError once');

  // The integration given a promise that rejects: every event is sent, onError hears why.
  const heard = [];
  const events = await sentry(noiseFilterIntegration({ matcher: loading.then(() => Matcher.builtin()), onError: (e) => heard.push(e) }));
  Sentry.captureException(wallet());
  Sentry.captureException(real());
  await Sentry.flush(5000);
  assert.deepEqual(events.map(value), ['Cannot redefine property: ethereum', 'invoice total is negative']);
  assert.equal(heard.length, 1);
  assert.ok(heard[0] instanceof WebAssembly.CompileError);

  // The integration and createBeforeSend given the client: the same.
  const throughClient = await sentry(noiseFilterIntegration({ matcher: client }));
  Sentry.captureException(wallet());
  await Sentry.flush(5000);
  assert.deepEqual(throughClient.map(value), ['Cannot redefine property: ethereum']);
  const event = { exception: { values: [{ type: 'TypeError', value: 'Cannot redefine property: ethereum' }] } };
  assert.equal(createBeforeSend(client)(event), event);

  // init() tries again: the wasm loads, the same client and hooks filter.
  await init(wasmBytes);
  assert.equal(Matcher.builtin().isNoise(wallet()), true);
  assert.equal(client.isNoise(wallet()), true, 'the built-in catalog, the service being away');
  assert.equal(createBeforeSend(client)(event), null);
  const after = await sentry(noiseFilterIntegration({ matcher: client }));
  Sentry.captureException(wallet());
  Sentry.captureException(real());
  await Sentry.flush(5000);
  assert.deepEqual(after.map(value), ['invoice total is negative']);
  client.close();
  await Sentry.close(2000);
});

test('importing an entry whose wasm is missing does not throw; the reason comes with the first use', async () => {
  // The installed package, copied without its wasm files: a broken install, or a bundle that left them out.
  const installed = dirname(fileURLToPath(import.meta.resolve('noise-filter/package.json')));
  const copy = await mkdtemp(join(tmpdir(), 'noise-filter-no-wasm-'));
  try {
    await cp(installed, copy, { recursive: true, filter: (from) => !from.endsWith('.wasm') });
    for (const entry of ['matcher-node.js', 'node.js']) {
      const api = await import(pathToFileURL(join(copy, 'dist', entry)).href);
      assert.throws(() => api.Matcher.builtin(), /noise-filter: the wasm did not load: ENOENT/, entry);
      await assert.rejects(api.init(), { code: 'ENOENT' }, entry);
      const client = api.createClient({ url: 'http://127.0.0.1:9', key: 'nf_' + '0'.repeat(48), refresh: false });
      assert.equal(client.isNoise('Googlebot/2.1'), false, entry);
      client.close();
    }
    const main = await import(pathToFileURL(join(copy, 'dist', 'node.js')).href);
    await assert.rejects(
      main.createHandler({ keys: new main.MemoryStore(), customPatterns: new main.MemoryStore() })(new Request('http://x/v1/filters')),
      /the wasm did not load/,
    );
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
});
