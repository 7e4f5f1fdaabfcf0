// `noise-filter/matcher/init`: the same API as `noise-filter/matcher`,
// loaded by hand.
export * from './matcher.js';

/**
 * Loads and compiles the matcher wasm, once (after a failure, again); the
 * matcher's constructors work once it resolves, and it rejects with why the
 * wasm could not load (the client and the Sentry integration then let
 * events through). Importing this entry never waits for the wasm (no top-level
 * await), so a page can start (and call `Sentry.init`) first. `wasm`: where
 * to find it (default: `noise_filter_matcher_bg.wasm` next to this module),
 * or its bytes, or a compiled `WebAssembly.Module`.
 */
export function init(wasm?: string | URL | Request | Response | BufferSource | WebAssembly.Module): Promise<void>;
