// createClient against the real endpoint: the package's own createHandler
// behind Node's http server on a real port, which the tests can make answer
// 429 or 500, stop and start again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { MemoryStore, addCustomPatterns, createClient, createHandler, createKey } from 'noise-filter';
import { createClient as createMatcherClient } from 'noise-filter/matcher';
import { nodeListener } from '../common/node-http.mjs';

const store = new MemoryStore();
const key = await createKey(store, { account: 'acme', label: 'client tests' });
await addCustomPatterns(store, 'acme', [{ pattern: 'acme-legacy-widget.js', category: 'third-party-script' }]);
const handle = createHandler({ keys: store, customPatterns: store });
// Only the account's own pattern says this is noise: the built-in catalog does not.
const OWN = { message: 'TypeError: x is undefined', frames: ['https://shop.example/acme-legacy-widget.js'] };

/** A real server; `mode` makes it answer as a bad day would. */
function service() {
  const seen = [];
  const state = { mode: 'serve', seen, server: null, port: 0 };
  const serve = nodeListener(handle);
  const listener = async (req, res) => {
    seen.push({ status: null, ifNoneMatch: req.headers['if-none-match'], acceptEncoding: req.headers['accept-encoding'], url: req.url });
    const entry = seen[seen.length - 1];
    // The bytes the answer's body takes on the wire, in its coding.
    const writeHead = res.writeHead.bind(res);
    res.writeHead = (status, headers) => {
      entry.contentEncoding = headers?.['content-encoding'];
      return writeHead(status, headers);
    };
    const end = res.end.bind(res);
    res.end = (chunk, ...rest) => {
      entry.bytes = chunk?.length ?? 0;
      return end(chunk, ...rest);
    };
    if (state.mode === 'limited') {
      entry.status = 429;
      res.writeHead(429, { 'retry-after': '7', 'content-type': 'application/json' });
      return res.end('{"error":"rate limited"}');
    }
    if (state.mode === 'broken') {
      entry.status = 500;
      res.writeHead(500);
      return res.end();
    }
    entry.status = await serve(req, res);
  };
  state.start = () => new Promise((resolve) => {
    state.server = createServer(listener);
    state.server.listen(state.port, '127.0.0.1', () => {
      state.port = state.server.address().port;
      resolve(`http://127.0.0.1:${state.port}`);
    });
  });
  state.stop = () => new Promise((resolve) => {
    state.server.closeAllConnections();
    state.server.close(() => resolve());
  });
  return state;
}

test('createClient fetches the account set, then revalidates with its ETag: a 304 keeps it', async () => {
  const svc = service();
  const url = await svc.start();
  const errors = [];
  const client = createClient({ url, key, refresh: false, onError: (e) => errors.push(e) });
  await client.ready;
  assert.equal(client.isNoise(OWN), true, 'the fetched set holds the account pattern');
  assert.match(client.set.etag, /^(W\/)?"/);
  assert.match(client.set.version, /^\d/);
  const confirmed = client.set.fetchedAt;
  const outcome = await client.refresh();
  assert.equal(outcome.status, 304);
  assert.ok(outcome.next >= 5 * 60_000 && outcome.next <= 15 * 60_000, String(outcome.next));
  assert.deepEqual(svc.seen.map((s) => s.status), [200, 304]);
  assert.equal(svc.seen[1].ifNoneMatch, client.set.etag);
  assert.ok(client.set.fetchedAt >= confirmed);
  assert.equal(client.isNoise(OWN), true);
  assert.deepEqual(errors, []);
  client.close();
  await svc.stop();
});

test("createClient gets the compressed answer: Node's fetch asks for it and decodes it, a fraction of the bytes", async () => {
  const svc = service();
  const url = await svc.start();
  const client = createClient({ url, key, refresh: false });
  try {
    await client.ready;
    const [first] = svc.seen;
    assert.match(first.acceptEncoding, /\bgzip\b/);
    // The account has a pattern of its own: its list is gzip (brotli is only
    // the usual answer's, compressed at build time).
    assert.equal(first.contentEncoding, 'gzip');
    // The same list as a client without Accept-Encoding gets it.
    const identity = await handle(new Request(`${url}/v1/filters`, { headers: { authorization: `Bearer ${key}` } }));
    assert.equal(identity.headers.get('content-encoding'), null);
    const identityBytes = (await identity.arrayBuffer()).byteLength;
    console.log(`bytes on the wire: ${first.contentEncoding} ${first.bytes}, identity ${identityBytes}`);
    assert.ok(first.bytes * 4 < identityBytes, `${first.bytes} of ${identityBytes}`);
    assert.equal(client.isNoise(OWN), true, 'decoded: the set holds the account pattern');
    // The gzip answer's own tag revalidates it.
    assert.notEqual(client.set.etag, identity.headers.get('etag'));
    assert.equal((await client.refresh()).status, 304);
  } finally {
    client.close();
    await svc.stop();
  }
});

test('the other variant and the matcher entry read the same set', async () => {
  const svc = service();
  const url = await svc.start();
  const client = createMatcherClient({ url: `${url}/`, key, variant: 'api', refresh: false });
  await client.ready;
  assert.equal(svc.seen[0].url, '/api/v1/filters');
  assert.equal(svc.seen[0].status, 200);
  assert.equal(client.isNoise(OWN), true);
  client.close();
  await svc.stop();
});

test('before any answer and while the service is away: the last good set, else the built-in catalog', async () => {
  const svc = service();
  const url = await svc.start();
  await svc.stop(); // nothing listens on that port now
  const errors = [];
  const client = createClient({ url, key, refresh: false, onError: (e) => errors.push(e), random: () => 1 });
  // Usable at once, before any answer: the built-in catalog.
  assert.equal(client.isNoise('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'), true);
  assert.equal(client.isNoise(OWN), false);
  await client.ready;
  assert.equal(client.set, null);
  assert.equal(errors.length, 1);
  // Backoff doubles (jitter at its top here): 5 s, then 10 s.
  assert.equal((await client.refresh()).next, 10_000);
  await svc.start(); // back on the same port
  const back = await client.refresh();
  assert.equal(back.status, 200);
  assert.equal(client.isNoise(OWN), true);
  await svc.stop();
  const away = await client.refresh();
  assert.equal(away.status, 0);
  assert.equal(away.next, 5_000, 'a success reset the backoff');
  assert.equal(client.isNoise(OWN), true, 'the last good set is kept');
  client.close();
});

test('a 429 waits for Retry-After; a 5xx backs off with jitter; neither throws', async () => {
  const svc = service();
  const url = await svc.start();
  const errors = [];
  const client = createClient({ url, key, refresh: false, onError: (e) => errors.push(e), random: () => 0.5 });
  await client.ready;
  svc.mode = 'limited';
  assert.deepEqual(await client.refresh(), { status: 429, next: 7_000 });
  svc.mode = 'broken';
  assert.deepEqual(await client.refresh(), { status: 500, next: 2_500 });
  assert.deepEqual(await client.refresh(), { status: 500, next: 5_000 });
  assert.equal(errors.length, 3);
  assert.equal(client.isNoise(OWN), true, 'the last good set is kept');
  svc.mode = 'serve';
  assert.equal((await client.refresh()).status, 304);
  client.close();
  await svc.stop();
});

test('refreshing in the background does not keep the process alive, and bad options are refused', async () => {
  const svc = service();
  const url = await svc.start();
  const client = createClient({ url, key });
  await client.ready;
  assert.equal(client.isNoise(OWN), true);
  client.close();
  await svc.stop();
  assert.throws(() => createClient({ url }), /key/);
  assert.throws(() => createClient({ key }), /url/);
  assert.throws(() => createClient({ url, key, variant: 'v2' }), /variant/);
});

test('onError hears an HTTP failure with its status', async () => {
  const svc = service();
  const url = await svc.start();
  const errors = [];
  const client = createClient({ url, key, refresh: false, onError: (e) => errors.push(e), random: () => 0.5 });
  await client.ready;
  svc.mode = 'limited';
  await client.refresh();
  svc.mode = 'broken';
  await client.refresh();
  assert.deepEqual(errors.map((e) => [e.status, e.message]), [
    [429, 'noise-filter: /v1/filters answered 429'],
    [500, 'noise-filter: /v1/filters answered 500'],
  ]);
  client.close();
  await svc.stop();
});

test('key null sends no Authorization (a proxy adds it); a key merely left out is refused', async () => {
  const svc = service();
  const url = await svc.start();
  const errors = [];
  const proxied = createClient({ url, key: null, refresh: false, onError: (e) => errors.push(e) });
  await proxied.ready;
  // Nothing in front of this service adds the key: the service refuses, and onError hears it.
  assert.deepEqual(errors.map((e) => e.status), [401]);
  assert.throws(() => createClient({ url, key: undefined }), /key/);
  assert.throws(() => createClient({ url, key: '' }), /key/);
  proxied.close();
  await svc.stop();
});

test('firstParty holds in the fetched set and in the built-in fallback; refused at once', async () => {
  const svc = service();
  const url = await svc.start();
  const injected = { message: 'cart.items is undefined', frames: ['https://cdn.injected.example/7f3a9c1e.js'] };
  const own = { message: 'cart.items is undefined', frames: ['https://shop.example.com/app.js'] };
  const client = createMatcherClient({ url, key, refresh: false, firstParty: { origins: ['https://shop.example.com'] } });
  assert.equal(client.isNoise(injected), true, 'the built-in fallback has the rule');
  assert.equal(client.isNoise(own), false);
  await client.ready;
  assert.equal(svc.seen[0].status, 200);
  assert.equal(client.isNoise(injected), true, 'the fetched set has the rule');
  assert.deepEqual(client.classify(injected).matches.map((m) => m.id), ['first-party-rule']);
  assert.equal(client.isNoise(own), false);
  assert.throws(() => createMatcherClient({ url, key, firstParty: { origins: ['https://'] } }), /^Error: firstParty: origins\[0\]: `https:\/\/` is not an origin/);
  client.close();
  await svc.stop();
});

test('exclude leaves patterns out of the fetched set and of the built-in fallback', async () => {
  const svc = service();
  const url = await svc.start();
  const headless = { message: 'TypeError: x is undefined', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36' };
  const client = createMatcherClient({ url, key, refresh: false, exclude: { ids: ['headless-chrome'], categories: ['third-party-script'] } });
  assert.equal(client.isNoise(headless), false, 'the built-in fallback leaves it out');
  await client.ready;
  assert.equal(svc.seen[0].status, 200);
  assert.equal(client.isNoise(headless), false, 'the fetched set leaves it out');
  assert.equal(client.isNoise(OWN), false, "the account's own pattern is third-party-script: left out too");
  assert.equal(client.isNoise('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'), true);
  assert.ok(!client.matcher.patterns.some((p) => p.id === 'headless-chrome' || p.category === 'third-party-script'));
  assert.throws(
    () => createMatcherClient({ url, key, exclude: { categories: ['bots'] } }),
    /^Error: exclude: categories\[0\]: `bots` is not a category/,
  );
  assert.throws(() => createMatcherClient({ url, key, exclude: { id: ['headless-chrome'] } }), /unknown field `id`/);
  client.close();
  await svc.stop();
});
