// `noise-filter/matcher` in browsers and bundlers: the matcher-only wasm is
// an asset next to this file, fetched and compiled once before the module
// finishes loading (top-level await), as in browser.js.
import init from './matcher-glue.js';

await init({ module_or_path: new URL('./noise_filter_matcher_bg.wasm', import.meta.url) });

export * from './matcher-api.js';
