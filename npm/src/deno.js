// Deno: the wasm comes in through the module graph as a compiled
// WebAssembly.Module (a source-phase import), so no read permission is needed.
import { initSync } from './glue.js';
import source module from './noise_filter_bg.wasm';

initSync({ module });

export * from './api.js';
