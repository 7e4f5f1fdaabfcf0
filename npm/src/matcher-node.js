// `noise-filter/matcher`, Node.js and Bun: the wasm is read from beside this
// file, synchronously, so the entry also loads through `require`.
import { readFileSync } from 'node:fs';
import { initSync } from './matcher-glue.js';

initSync({ module: readFileSync(new URL('./noise_filter_matcher_bg.wasm', import.meta.url)) });

export * from './matcher-api.js';
