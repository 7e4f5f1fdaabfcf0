// `noise-filter/matcher` in Deno: the matcher-only wasm comes in through
// the module graph as a compiled WebAssembly.Module (no read permission).
import { initSync } from './matcher-glue.js';
import source module from './noise_filter_matcher_bg.wasm';

initSync({ module });

export * from './matcher-api.js';
