// The README page's loading, timed: from the moment the page's script runs
// (where it calls Sentry.init) until the wasm is there and the built-in
// matcher built, and until the client's first answer is compiled: what the
// Sentry integration holds page-load errors for. page-load.mjs reads
// `window.__timing`.
import { Matcher, createClient, init } from 'noise-filter/matcher/init';

const start = performance.now();
const client = createClient({ url: '/noise-filter', key: null, refresh: false });
const wasm = init().then(() => {
  const loaded = performance.now() - start;
  Matcher.builtin();
  return { loaded, built: performance.now() - start };
});
Promise.all([wasm, client.ready]).then(([timing]) => {
  window.__timing = { ...timing, ready: performance.now() - start };
});
