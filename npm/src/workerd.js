// Cloudflare Workers (workerd): the bundler turns a `.wasm` import into a
// compiled WebAssembly.Module, instantiated synchronously.
import * as glue from './glue.js';
import { loadingOf } from './loading.js';
import module from './noise_filter_bg.wasm';

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
