// `noise-filter/matcher` in Cloudflare Workers (workerd): the bundler turns
// the `.wasm` import into a compiled WebAssembly.Module.
import { initSync } from './matcher-glue.js';
import module from './noise_filter_matcher_bg.wasm';

initSync({ module });

export * from './matcher-api.js';
