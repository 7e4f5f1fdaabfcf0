// `noise-filter/matcher`: the matcher alone, over the matcher-only wasm
// (`matcher-glue.js`, made by wasm-bindgen from `noise-filter-wasm` built
// without its `handler` feature: no endpoint). The same matcher exports as
// the main wasm's, so the same class (matching.js) over another glue. Each
// runtime's entry (matcher-node.js, …) loads the wasm, then re-exports this.
// Types: matcher.d.ts.

import * as wasm from './matcher-glue.js';
import { loadingOf } from './loading.js';
import { matcherClass } from './matching.js';

import { clientFor } from './client.js';
export { DEFAULT_HOLD_MS, createBeforeSend, noiseFilterIntegration, parseStack, toEvent } from './matching.js';
export { bugsnagOnError, datadogBeforeSend, honeybadgerBeforeNotify, posthogBeforeSend, rollbarCheckIgnore } from './trackers.js';

/** The patterns of a compiled set, applied to error events. */
export const Matcher = matcherClass(wasm);

/** A consumer of a running service (client.js), over this entry's matcher. */
export const createClient = clientFor(Matcher, loadingOf(wasm));
