// `noise-filter/init`: the API without top-level await, for the few places
// that forbid it (service workers). Nothing works until `init()` resolves.
import load from './glue.js';

export * from './api.js';

let loading;

/** Loads and compiles the wasm once (default: the file next to this module). */
export function init(wasm) {
  loading ??= load({ module_or_path: wasm ?? new URL('./noise_filter_bg.wasm', import.meta.url) }).then(() => undefined);
  return loading;
}
