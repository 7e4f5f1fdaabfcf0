// `noise-filter/matcher/init`: the matcher entry without top-level await.
// Importing it does not wait for the wasm, so it never delays the importing
// module (a page's `Sentry.init`); `init()` loads and compiles the wasm once,
// and the matcher's constructors work once it resolves. Until then the
// client matches nothing and the Sentry integration holds or passes events.
import * as glue from './matcher-glue.js';
import { loadingOf } from './loading.js';

export * from './matcher-api.js';

/** Loads and compiles the matcher wasm once (default: the file next to this module); after a failure, tries again. */
export function init(wasm) {
  return loadingOf(glue).load(wasm ?? new URL('./noise_filter_matcher_bg.wasm', import.meta.url));
}
