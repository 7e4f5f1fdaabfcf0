// `noise-filter/matcher` in Cloudflare Workers (workerd): the bundler turns
// the `.wasm` import into a compiled WebAssembly.Module.
import * as glue from './matcher-glue.js';
import { loadingOf } from './loading.js';
import module from './noise_filter_matcher_bg.wasm';

const read = () => module;

loadingOf(glue).loadSync(read);

export * from './matcher-api.js';

/** Resolves once the wasm is loaded (trying again after a failure), rejects with why it is not. */
export function init(source) {
  const loading = loadingOf(glue);
  if (source !== undefined) return loading.load(source);
  if (!loading.loaded) loading.loadSync(read);
  return loading.attempt;
}
