// Deno: the wasm comes in through the module graph as a compiled
// WebAssembly.Module (a source-phase import), so no read permission is needed.
import * as glue from './glue.js';
import { loadingOf } from './loading.js';
import source module from './noise_filter_bg.wasm';

const read = () => module;

loadingOf(glue).loadSync(read);

export * from './api.js';

/** Resolves once the wasm is loaded (trying again after a failure), rejects with why it is not. */
export function init(source) {
  const loading = loadingOf(glue);
  if (source !== undefined) return loading.load(source);
  if (!loading.loaded) loading.loadSync(read);
  return loading.attempt;
}
