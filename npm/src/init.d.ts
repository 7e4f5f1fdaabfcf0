// `noise-filter/init`: the same API as `noise-filter`, loaded by hand.
export * from './index.js';

/**
 * Loads and compiles the wasm, once (after a failure, again); nothing else
 * works before it resolves, and it rejects with why the wasm could not
 * load. For service workers, where top-level await is not allowed. `wasm`: where
 * to find it (default: `noise_filter_bg.wasm` next to this module), or its
 * bytes, or a compiled `WebAssembly.Module`.
 */
export function init(wasm?: string | URL | Request | Response | BufferSource | WebAssembly.Module): Promise<void>;
