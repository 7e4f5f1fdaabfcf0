// One page, built by each bundler a user may have (webpack 5, esbuild,
// Rollup; Vite has pages of its own): the matcher entry matches an event,
// and a client fetches the account's set from the test's local server.
// The outcome goes to `window.__results` for browser.test.mjs.
import { Matcher, createClient } from 'noise-filter/matcher';
import { check, publish } from '../checks.js';

await check('the matcher entry matches an event', () => {
  const matcher = Matcher.builtin();
  if (!matcher.isNoise({ message: 'TypeError: Cannot redefine property: ethereum' })) throw new Error('noise not matched');
  if (matcher.isNoise({ message: 'TypeError: cart.items is undefined' })) throw new Error('a real error matched');
});

await check('a client fetches the account set from the local service', async () => {
  const key = new URLSearchParams(location.search).get('key');
  const client = createClient({ url: location.origin, key, refresh: false });
  await client.ready;
  if (client.set === null) throw new Error('nothing fetched');
  if (!client.isNoise({ message: 'x', frames: [`${location.origin}/acme-legacy-widget.js`] })) throw new Error('the account pattern is not in the set');
  client.close();
});

publish();
