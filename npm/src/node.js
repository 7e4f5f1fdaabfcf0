// Node.js and Bun: the wasm is read from beside this file, synchronously,
// so the package also loads through `require` (Node >= 20.19). A wasm that
// cannot be read or compiled does not fail the import (loading.js).
import * as glue from './glue.js';
import { loadingOf } from './loading.js';
import { readFileSync } from 'node:fs';

const read = () => readFileSync(new URL('./noise_filter_bg.wasm', import.meta.url));

loadingOf(glue).loadSync(read);

export * from './api.js';

/** Resolves once the wasm is loaded (trying again after a failure), rejects with why it is not. */
export function init(source) {
  const loading = loadingOf(glue);
  if (source !== undefined) return loading.load(source);
  if (!loading.loaded) loading.loadSync(read);
  return loading.attempt;
}
