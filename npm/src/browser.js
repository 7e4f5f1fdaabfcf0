// Browsers and bundlers (Vite, webpack, Rollup, esbuild): the wasm is an
// asset next to this file, which bundlers copy and rename; it is fetched and
// compiled once, before the module finishes loading (top-level await).
import init from './glue.js';

await init({ module_or_path: new URL('./noise_filter_bg.wasm', import.meta.url) });

export * from './api.js';
