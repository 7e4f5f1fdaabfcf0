// `noise-filter/init`: the API without top-level await, for the few places
// that forbid it (service workers). Nothing works until `init()` resolves.
import * as glue from './glue.js';
import { loadingOf } from './loading.js';

export * from './api.js';

/** Loads and compiles the wasm once (default: the file next to this module); after a failure, tries again. */
export function init(wasm) {
  return loadingOf(glue).load(wasm ?? new URL('./noise_filter_bg.wasm', import.meta.url));
}
