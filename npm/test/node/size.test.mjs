// What a browser page downloads to filter its own errors: the matcher entry
// with the client and one integration (Sentry's, or another tracker's), as a production build ships
// them (esbuild, bundled and minified, the browser condition), plus the
// matcher-only wasm, each file gzip -9 on its own as a server compresses it
// (and brotli at quality 11, reported). The budget is the product's goal,
// 150 KB (150,000 bytes) gzip: the largest page measured 149,533 B once the
// matcher-only wasm ran its regexes and its lowercasing in the JavaScript
// engine and the core counted a regex's compiled size itself (200 KB, then
// 168 KB before); docs/BENCHMARKS.md ("npm: wasm sizes") keeps the figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const BUDGET = 150_000;

// Each integration on its own page: the other trackers' hooks are small JS
// over the same wasm, and a page keeps only the one it imports.
const INTEGRATIONS = ['noiseFilterIntegration', 'datadogBeforeSend', 'bugsnagOnError', 'rollbarCheckIgnore', 'honeybadgerBeforeNotify', 'posthogBeforeSend'];
/** The other trackers' hooks: each names itself in its refusals, a text a minifier keeps. */
const TRACKERS = INTEGRATIONS.slice(1);

for (const integration of INTEGRATIONS) {
  test(`a page with the matcher, the client and ${integration} downloads at most 150 KB gzip, and no other tracker's hook`, async (t) => {
    const page = await build({
      stdin: {
        contents: `export { Matcher, createClient, ${integration} } from 'noise-filter/matcher';`,
        resolveDir: fileURLToPath(new URL('.', import.meta.url)),
      },
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      conditions: ['browser'],
      write: false,
      logLevel: 'warning',
    });
    const [script] = page.outputFiles;
    const wasm = readFileSync(fileURLToPath(import.meta.resolve('noise-filter/noise_filter_matcher_bg.wasm')));
    const gzip = (bytes) => gzipSync(bytes, { level: 9 }).length;
    const brotli = (bytes) => brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
    const sizes = { script: gzip(script.contents), wasm: gzip(wasm) };
    const total = sizes.script + sizes.wasm;
    t.diagnostic(
      `${integration}: script ${script.contents.length} B raw, ${sizes.script} B gzip, ${brotli(script.contents)} B brotli; ` +
        `wasm ${wasm.length} B raw, ${sizes.wasm} B gzip, ${brotli(wasm)} B brotli; ` +
        `total ${total} B gzip, ${brotli(script.contents) + brotli(wasm)} B brotli`,
    );
    // The bundle holds what it exports, not a stub: the three names and the
    // code that loads the wasm.
    const text = script.text;
    assert.match(text, /noise_filter_matcher_bg\.wasm/);
    assert.ok(script.contents.length > 10_000, `${script.contents.length} B is too small to hold the three entries`);
    for (const other of TRACKERS) {
      assert.equal(text.includes(other), other === integration, `${other}'s hook ${other === integration ? 'missing' : 'kept'}`);
    }
    assert.ok(total <= BUDGET, `${total} B gzip is over the ${BUDGET} B budget (${JSON.stringify(sizes)})`);
  });
}
