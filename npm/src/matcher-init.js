// `noise-filter/matcher/init`: the matcher entry without top-level await.
// Importing it does not wait for the wasm, so it never delays the importing
// module (a page's `Sentry.init`); `init()` loads and compiles the wasm once,
// and nothing of the matcher works until it resolves.
import load from './matcher-glue.js';

export * from './matcher-api.js';

let loading;

/** Loads and compiles the matcher wasm once (default: the file next to this module). */
export function init(wasm) {
  loading ??= load({ module_or_path: wasm ?? new URL('./noise_filter_matcher_bg.wasm', import.meta.url) }).then(() => undefined);
  return loading;
}
