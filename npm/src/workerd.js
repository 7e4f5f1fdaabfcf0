// Cloudflare Workers (workerd): the bundler turns a `.wasm` import into a
// compiled WebAssembly.Module, instantiated synchronously.
import { initSync } from './glue.js';
import module from './noise_filter_bg.wasm';

initSync({ module });

export * from './api.js';
