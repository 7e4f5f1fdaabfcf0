// Browsers and bundlers (Vite, webpack, Rollup, esbuild): the wasm is an
// asset next to this file, which bundlers copy and rename; it is fetched and
// compiled once, before the module finishes loading (top-level await). A
// wasm that cannot load does not fail the import (loading.js): `init()`
// rejects with why.
import * as glue from './glue.js';
import { loadingOf } from './loading.js';

const wasm = () => new URL('./noise_filter_bg.wasm', import.meta.url);

await loadingOf(glue).load(wasm()).catch(() => {});

export * from './api.js';

/** Resolves once the wasm is loaded (trying again after a failure), rejects with why it is not. */
export function init(source) {
  return loadingOf(glue).load(source ?? wasm());
}
