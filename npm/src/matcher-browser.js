// `noise-filter/matcher` in browsers and bundlers: the matcher-only wasm is
// an asset next to this file, fetched and compiled once before the module
// finishes loading (top-level await), as in browser.js. A wasm that cannot
// load (blocked, a 404, a Content-Security-Policy without
// 'wasm-unsafe-eval') does not fail the import: the failure is recorded
// (loading.js) and `init()` rejects with it.
import * as glue from './matcher-glue.js';
import { loadingOf } from './loading.js';

const wasm = () => new URL('./noise_filter_matcher_bg.wasm', import.meta.url);

await loadingOf(glue).load(wasm()).catch(() => {});

export * from './matcher-api.js';

/** Resolves once the wasm is loaded (trying again after a failure), rejects with why it is not. */
export function init(source) {
  return loadingOf(glue).load(source ?? wasm());
}
