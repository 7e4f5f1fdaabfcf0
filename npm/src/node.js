// Node.js and Bun: the wasm is read from beside this file, synchronously,
// so the package also loads through `require` (Node >= 20.19).
import { readFileSync } from 'node:fs';
import { initSync } from './glue.js';

initSync({ module: readFileSync(new URL('./noise_filter_bg.wasm', import.meta.url)) });

export * from './api.js';
