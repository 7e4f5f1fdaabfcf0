// Preloaded (`node --import`) into the README snippets that name a
// deployment by its public address: what they fetch from
// https://filters.example.com goes to the test's server instead
// (NOISE_FILTER_TEST_URL), so the snippet runs as written.
const target = process.env.NOISE_FILTER_TEST_URL;
const fetchOf = globalThis.fetch;

globalThis.fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (target !== undefined && url.origin === 'https://filters.example.com') {
    return fetchOf(new URL(url.pathname + url.search, target), init);
  }
  return fetchOf(input, init);
};
