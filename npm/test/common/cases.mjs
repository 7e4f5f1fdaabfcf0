// The package's test cases, the same in every runtime: Node, Bun and Deno
// register them with node:test (node/suite.test.mjs), the Chromium page runs
// them and reports (browser/). `nf` is the package as the runtime imports
// it; `fixtures` is core/tests/parity/requests.json; `oracle` is what the
// core answers natively for them (both written into npm/pkg by `cargo xtask
// npm test`, see core/examples/oracle.rs).

import { deepEqual, equal, ok, rejects, throws } from './assert.mjs';

/** Every case: `{ name, fn }`. */
export function cases({ nf, fixtures, oracle }) {
  const list = [];
  const test = (name, fn) => list.push({ name, fn });
  const answers = once(() => runFixtures(nf, fixtures));

  // -- the handler answers with the core's native bytes ---------------------
  // A browser drops `Accept-Encoding` from a Request it builds (a forbidden
  // header name): a page cannot ask the handler for a coding, so there the
  // rows that do are sent (they count) and compared in Node, Bun, Deno and
  // workerd only.
  const dropsAcceptEncoding = !new Request('http://localhost/', { headers: { 'accept-encoding': 'gzip' } }).headers.has('accept-encoding');
  fixtures.requests.forEach((request, i) => {
    const asksCoding = (request.headers ?? []).some(([name]) => name.toLowerCase() === 'accept-encoding');
    if (asksCoding && dropsAcceptEncoding) return;
    test(`same bytes as native: ${request.name}`, async () => {
      const actual = (await answers()).results[i];
      const expected = oracle.requests[i];
      equal(expected.name, request.name, 'oracle and fixtures disagree on order');
      equal(actual.status, expected.status, 'status');
      deepEqual(actual.headers, fetchHeaders(expected.headers), 'headers');
      // An encoded body (Content-Encoding) is compared as bytes, in hex.
      if (expected.bodyHex !== undefined) equal(actual.bodyHex, expected.bodyHex, 'encoded body');
      else equal(actual.body, expected.body, 'body');
      if (expected.statuses) deepEqual(actual.statuses, expected.statuses, 'statuses over the repeats');
    });
  });

  // -- the matcher (the same cases run on `noise-filter/matcher`) ------------
  const bodyOf = async (name) => (await answers()).results[fixtures.requests.findIndex((r) => r.name === name)].body;
  for (const { name, fn } of matcherCases({ nf, fixtures, oracle, bodyOf })) test(name, fn);

  // -- the store helpers ------------------------------------------------------
  test('createKey stores only the hash; revokeKey turns a 200 into a 401', async () => {
    const store = new nf.MemoryStore();
    const key = await nf.createKey(store, { account: 'acme', label: 'test' });
    ok(/^nf_[0-9a-f]{48}$/.test(key), key);
    ok(store.keys().every((k) => !k.includes(key.slice(3))), 'the key itself is not stored');
    const handle = nf.createHandler({ keys: store, customPatterns: store });
    const get = () => handle(new Request('https://x.example/v1/filters', { headers: { Authorization: `Bearer ${key}` } }));
    equal((await get()).status, 200);
    equal(await nf.revokeKey(store, key), true);
    const refused = await get();
    equal(refused.status, 401);
    deepEqual(await refused.json(), { error: 'Invalid API key' });
    equal(await nf.revokeKey(store, `nf_${'1'.repeat(48)}`), false, 'an unknown key');
    await rejects(nf.createKey(store, { account: 'Not An Account' }), /invalid account name/);
  });

  test('addCustomPatterns validates all first; the served list holds them', async () => {
    const store = new nf.MemoryStore();
    const key = await nf.createKey(store, { account: 'acme' });
    await rejects(
      nf.addCustomPatterns(store, 'acme', [{ pattern: 'fine one' }, { pattern: '(?<=x)y', type: 'regex' }]),
      /pattern 2/,
    );
    deepEqual(await nf.listCustomPatterns(store, 'acme'), [], 'nothing stored on refusal');
    deepEqual(await nf.addCustomPatterns(store, 'acme', [{ pattern: 'our-widget.js' }, { pattern: 'Legacy', id: 'custom-legacy', category: 'OTHER' }]), [
      'custom-1',
      'custom-legacy',
    ]);
    const handle = nf.createHandler({ keys: store, customPatterns: store });
    const response = await handle(
      new Request('https://x.example/v1/filters?categories=custom,other&minConfidence=1', { headers: { Authorization: `Bearer ${key}` } }),
    );
    const ids = (await response.json()).patterns.map((p) => p.id);
    ok(ids.includes('custom-1') && ids.includes('custom-legacy'), JSON.stringify(ids));
    equal(await nf.removeCustomPattern(store, 'acme', 'custom-1'), true);
    equal(await nf.removeCustomPattern(store, 'acme', 'custom-1'), false);
    deepEqual((await nf.listCustomPatterns(store, 'acme')).map((p) => [p.id, p.category]), [['custom-legacy', 'other']]);
  });

  test('the handler counts in rateLimitStore, reads keys and patterns from their stores', async () => {
    const keys = new nf.MemoryStore();
    const patterns = new nf.MemoryStore();
    const rate = new nf.MemoryStore();
    const key = await nf.createKey(keys, { account: 'acme' });
    await nf.addCustomPatterns(patterns, 'acme', [{ pattern: 'only in the pattern store' }]);
    const handle = nf.createHandler({ keys, customPatterns: patterns, rateLimitStore: rate });
    const response = await handle(new Request('https://x.example/api/v1/filters?categories=OTHER', { headers: { Authorization: `Bearer ${key}` } }));
    ok((await response.text()).includes('only in the pattern store'));
    // This minute's counter and the key's last-window record (read by the
    // first request of a window to delete stale counters), nothing else.
    const counted = rate.keys().sort();
    ok(
      counted.length === 2 && counted.every((k) => k.startsWith('rate/')) && counted[1].endsWith('/last'),
      JSON.stringify(counted),
    );
    equal(keys.keys().length, 1, 'nothing written to the key store');
  });

  test('stores may answer synchronously, with bytes, and fail without a 5xx beyond 503', async () => {
    const backing = new nf.MemoryStore();
    const key = await nf.createKey(backing, { account: 'acme' });
    const values = new Map();
    for (const k of backing.keys()) values.set(k, new TextEncoder().encode(await backing.get(k)).buffer);
    const syncStore = { get: (k) => values.get(k) };
    const handle = nf.createHandler({ keys: syncStore, customPatterns: syncStore });
    const request = () => new Request('https://x.example/v1/filters', { headers: { Authorization: `Bearer ${key}` } });
    equal((await handle(request())).status, 200);
    const broken = nf.createHandler({ keys: { get: () => Symbol('not a value') }, customPatterns: syncStore });
    equal((await broken(request())).status, 503, 'an unreadable value is a store failure');
    const badCounter = { get: async () => null, increment: async () => 'many', delete: async () => {} };
    equal((await nf.createHandler({ keys: syncStore, customPatterns: syncStore, rateLimitStore: badCounter })(request())).status, 503);
    throws(() => nf.createHandler({ keys: {}, customPatterns: syncStore }), /keys needs a get/);
  });

  return list;
}

/** Runs every fixture request through the package's handler, in order. */
async function runFixtures(nf, fixtures) {
  const store = new nf.MemoryStore();
  const keys = {};
  for (const seed of fixtures.keys) {
    const random = Uint8Array.from(seed.random.match(/../g), (h) => parseInt(h, 16));
    const options = { account: seed.account, label: seed.label ?? '', now: fixtures.now, random };
    keys[seed.name] = await nf.createKey(store, options);
    if (seed.revoked) await nf.revokeKey(store, keys[seed.name], { now: fixtures.now });
  }
  for (const { account, patterns } of fixtures.customPatterns ?? []) {
    await nf.addCustomPatterns(store, account, patterns, { now: fixtures.now });
  }
  let now = fixtures.now;
  const clock = () => now;
  const handler = nf.createHandler({ keys: store, customPatterns: store, rateLimitStore: new nf.MemoryStore(), clock });
  const down = async () => {
    throw new Error('store down');
  };
  const failing = { get: down, increment: down, delete: down };
  const broken = nf.createHandler({ keys: failing, customPatterns: failing, rateLimitStore: failing, clock });

  const results = [];
  let etag = '';
  for (const request of fixtures.requests) {
    now = fixtures.now + (request.at ?? 0);
    const headers = (request.headers ?? []).map(([name, value]) => [name, substitute(value, keys, etag)]);
    const repeat = request.repeat ?? 1;
    const statuses = {};
    let last;
    for (let i = 0; i < repeat; i++) {
      const init = { method: request.method ?? 'GET', headers };
      const response = await (request.storeFails ? broken : handler)(new Request(`http://localhost${request.target}`, init));
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      last = response;
    }
    const bytes = new Uint8Array(await last.arrayBuffer());
    // A Response made by the handler is not decoded when read: these are
    // the bytes a client receives, in the coding Content-Encoding names.
    const encoded = last.headers.has('content-encoding');
    const body = encoded ? undefined : new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    const bodyHex = encoded ? Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('') : undefined;
    etag = last.headers.get('etag') ?? etag;
    results.push({ status: last.status, headers: [...last.headers], body, bodyHex, statuses: repeat > 1 ? statuses : undefined });
  }
  return { results, keys };
}

/**
 * The matcher's cases: `nf` is the main entry or `noise-filter/matcher`.
 * `bodyOf(name)`: the body of the fixture request `name` (the package's own
 * handler's answer, or by default the native core's from the oracle, which
 * the handler cases show to be the same bytes).
 */
export function matcherCases({ nf, fixtures, oracle, bodyOf = async (name) => oracle.requests[fixtures.requests.findIndex((r) => r.name === name)].body }) {
  const list = [];
  const test = (name, fn) => list.push({ name, fn });
  // -- the matcher gives the core's native verdicts -------------------------
  const matchers = once(async () => {
    return {
      builtin: nf.Matcher.builtin({ minConfidence: 0.5 }),
      builtinAll: nf.Matcher.builtin({ minConfidence: 0 }),
      builtinDefault: nf.Matcher.builtin(),
      responseA: nf.Matcher.fromResponse(await bodyOf('A: all patterns')),
      responseB: nf.Matcher.fromResponse(await bodyOf('B: all patterns')),
      custom: nf.Matcher.builtin().withPatterns(fixtures.matcherPatterns),
      firstParty: nf.Matcher.builtin({ minConfidence: 0.5, firstParty: fixtures.firstParty }),
    };
  });
  for (const name of Object.keys(oracle.verdicts)) {
    test(`same verdicts as native: ${name} matcher, ${oracle.events.length} events`, async () => {
      const matcher = (await matchers())[name];
      oracle.events.forEach(({ event }, i) => {
        const verdict = matcher.classify(event);
        deepEqual(verdict, oracle.verdicts[name][i], `event ${i} ${JSON.stringify(event).slice(0, 200)}`);
        equal(matcher.isNoise(event), verdict.noise, `isNoise of event ${i}`);
      });
    });
  }

  test('Matcher.builtin() holds the default set of the core, the one the service lists by default', async () => {
    const built = await matchers();
    const names = Object.keys(oracle.patterns);
    deepEqual(names.sort(), ['builtin', 'builtinAll', 'builtinDefault']);
    for (const name of names) deepEqual(built[name].patterns, oracle.patterns[name], `${name}'s patterns`);
    ok(oracle.patterns.builtinDefault.length < oracle.patterns.builtinAll.length, 'the default leaves some out');
  });

  test('the built-in matcher catches most of the labelled noise and little of the real errors', async () => {
    const { builtin } = await matchers();
    const rate = (label) => {
      const events = oracle.events.filter((e) => e.label === label);
      return events.filter((e) => builtin.isNoise(e.event)).length / events.length;
    };
    ok(rate('noise') > 0.5, `noise caught: ${rate('noise')}`);
    ok(rate('real') < 0.1, `real errors caught: ${rate('real')}`);
  });

  // -- the matcher's inputs ---------------------------------------------------
  test('Matcher.fromResponse reads text, bytes and parsed JSON alike', async () => {
    const text = await bodyOf(fixtures.requests[0].name);
    const event = { message: 'x', frames: ['chrome-extension://abcdefghijklmnop/content.js'] };
    const expected = nf.Matcher.fromResponse(text).classify(event);
    ok(expected.noise, 'a chrome-extension frame is noise');
    deepEqual(nf.Matcher.fromResponse(new TextEncoder().encode(text)).classify(event), expected);
    deepEqual(nf.Matcher.fromResponse(JSON.parse(text)).classify(event), expected);
    throws(() => nf.Matcher.fromResponse('{"error":"Invalid API key"}'), /not a pattern list/);
  });

  test('classify reads an Error: type, message and the frames of its stack', () => {
    const error = new TypeError('Cannot read properties of undefined');
    error.stack = [
      'TypeError: Cannot read properties of undefined',
      '    at inject (chrome-extension://abcdefghijklmnop/content.js:10:5)',
      '    at https://app.example/main.js:1:2',
    ].join('\n');
    const verdict = nf.Matcher.builtin().classify(error);
    ok(verdict.noise, 'noise');
    deepEqual(
      verdict.matches.filter((m) => m.field === 'frame').map((m) => m.index),
      [0],
      'the extension frame, and only it',
    );
    deepEqual(nf.toEvent(error), {
      type: 'TypeError',
      message: 'Cannot read properties of undefined',
      frames: ['chrome-extension://abcdefghijklmnop/content.js', 'https://app.example/main.js'],
    });
  });

  test('classify reads a message string and an event object', () => {
    const matcher = nf.Matcher.builtin();
    const bot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
    ok(matcher.classify({ message: 'boom', userAgent: bot }).matches.some((m) => m.field === 'userAgent'));
    ok(!matcher.isNoise('TypeError: order.total is undefined'), 'an application error is not noise');
    const viaUrl = matcher.classify({ message: 'x', url: 'moz-extension://1234/script.js' });
    deepEqual(viaUrl.matches.map((m) => [m.field, m.index]), [['frame', 0]]);
  });

  test('classify reads a Sentry event: the thrown exception, its frames, the user agent', () => {
    const event = {
      exception: {
        values: [
          { type: 'Error', value: 'cause' },
          {
            type: 'TypeError',
            value: 'boom',
            stacktrace: { frames: [{ filename: 'https://app.example/a.js' }, { abs_path: 'safari-extension://x/y.js' }] },
          },
        ],
      },
      request: { headers: { 'User-Agent': 'Mozilla/5.0' } },
    };
    deepEqual(nf.toEvent(event), {
      type: 'TypeError',
      message: 'boom',
      frames: ['https://app.example/a.js', 'safari-extension://x/y.js'],
      userAgent: 'Mozilla/5.0',
    });
  });

  test('createBeforeSend drops noise and passes real errors through', () => {
    const seen = [];
    const beforeSend = nf.createBeforeSend(nf.Matcher.builtin(), { onNoise: (verdict) => seen.push(verdict) });
    const noise = { exception: { values: [{ type: 'TypeError', value: 'x', stacktrace: { frames: [{ filename: 'chrome-extension://abcdefghijklmnop/c.js' }] } }] } };
    const real = { exception: { values: [{ type: 'TypeError', value: 'order.total is undefined' }] } };
    equal(beforeSend(noise, {}), null, 'noise is dropped');
    equal(beforeSend(real, {}), real, 'a real error is kept');
    equal(seen.length, 1, 'onNoise saw the dropped event');
  });

  test('parseStack reads V8, SpiderMonkey and JavaScriptCore stacks', () => {
    deepEqual(
      nf.parseStack(
        'Error: mail a@b.example failed\n    at f (https://a.example/x.js:1:2)\n    at https://a.example/y.js:3:4\n' +
          '    at async g (file:///srv/app.mjs:5:6)\n    at Array.map (<anonymous>)\n    at new Z (native)\n' +
          '    at eval (eval at run (https://a.example/z.js:7:8), <anonymous>:1:1)',
      ),
      ['https://a.example/x.js', 'https://a.example/y.js', 'file:///srv/app.mjs', 'https://a.example/z.js'],
    );
    deepEqual(nf.parseStack('f@https://a.example/x.js:1:2\n@moz-extension://u/y.js:3:4\n'), [
      'https://a.example/x.js',
      'moz-extension://u/y.js',
    ]);
    deepEqual(nf.parseStack('global code@https://a.example/x.js:1:2\n[native code]\nf@[native code]'), ['https://a.example/x.js']);
    deepEqual(nf.parseStack(undefined), []);
  });

  test('frames holding a newline are classified one by one', () => {
    const matcher = nf.Matcher.fromPatterns([{ id: 'nl', pattern: 'a\nb' }]);
    deepEqual(matcher.classify({ frames: ['x', 'a\nb'] }).matches.map((m) => m.index), [1]);
  });

  test('long texts grow the wasm input buffer; lone surrogates still cut the texts right', () => {
    const matcher = nf.Matcher.builtin().withPatterns([{ id: 'app-unicode', pattern: 'ÉCHEC DE CHARGEMENT' }]);
    const long = `${'é'.repeat(300_000)} chrome-extension://abcdefghijklmnop/`;
    deepEqual(matcher.classify({ message: long }).matches.map((m) => m.field), ['message']);
    for (let i = 0; i < 5; i++) nf.Matcher.builtin({ minConfidence: 0 }); // grows the wasm memory
    ok(matcher.isNoise({ frames: ['chrome-extension://abcdefghijklmnop/c.js'] }), 'after growth');
    ok(!matcher.isNoise('TypeError: order.total is undefined'), 'a clean event after growth');
    const verdict = matcher.classify({ type: '\ud800', message: 'échec de chargement', userAgent: 'Googlebot/2.1' });
    deepEqual(
      verdict.matches.map((m) => [m.id, m.field]).filter(([id]) => id === 'app-unicode'),
      [['app-unicode', 'message']],
    );
    ok(verdict.matches.some((m) => m.field === 'userAgent'), 'the user agent is cut where it starts');
  });

  test('the matcher refuses a regex outside the shared subset, with the reason', () => {
    throws(() => nf.Matcher.fromPatterns([{ id: 'x', pattern: 'a(?=b)', type: 'regex' }]), /look-around/);
    throws(() => nf.Matcher.builtin().withPatterns([{ id: 'x', pattern: 'a\\1', type: 'regex' }]), /pattern x/);
    throws(() => nf.Matcher.fromPatterns([{ pattern: 'no id' }]), /invalid pattern/);
  });

  test("refusals read as the README words them: fromPatterns' and fromResponse's prefixes, JSON.parse's message", () => {
    throws(() => nf.Matcher.fromPatterns([{ pattern: 'x' }]), /^invalid pattern: patterns\[0\]: missing field `id`$/);
    throws(() => nf.Matcher.fromResponse('{"patterns":[{"id":5,"pattern":"x"}]}'), /^not a pattern list response: patterns\[0\]\.id: expected a string, found a number$/);
    throws(() => nf.Matcher.fromResponse('{"error":"Invalid API key"}'), /^not a pattern list response: missing field `patterns`$/);
    let parser;
    try {
      JSON.parse('nope');
    } catch (error) {
      parser = error.message;
    }
    throws(() => nf.Matcher.fromResponse('nope'), new RegExp(`^not a pattern list response: ${parser.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  });

  test('exclude: Matcher.builtin and excluding() leave the named patterns out; the core words a refusal', async () => {
    const headless = { message: 'TypeError: order.total is undefined', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36' };
    const all = nf.Matcher.builtin();
    deepEqual(all.classify(headless).matches.map((m) => m.id), ['headless-chrome'], 'a headless browser is bot traffic');
    const e2e = nf.Matcher.builtin({ exclude: { ids: ['headless-chrome'] } });
    ok(!e2e.isNoise(headless), 'left out');
    deepEqual(e2e.patterns, all.patterns.filter((p) => p.id !== 'headless-chrome'));
    const fetched = nf.Matcher.fromResponse(await bodyOf('A: all patterns'));
    const noBots = fetched.excluding({ categories: ['BOT_TRAFFIC'] });
    ok(noBots.patterns.length > 0 && noBots.patterns.every((p) => p.category !== 'bot-traffic'), 'either spelling');
    ok(!noBots.isNoise({ message: 'x', userAgent: 'Googlebot/2.1' }));
    ok(noBots.isNoise({ message: 'x', frames: ['chrome-extension://abcdefghijklmnop/c.js'] }), 'the other categories stay');
    throws(
      () => nf.Matcher.builtin({ exclude: { categories: ['bots'] } }),
      /^exclude: categories\[0\]: `bots` is not a category \(browser-extension, third-party-script, bot-traffic, network-issue, known-library, other, custom, or Variant B's spelling of one\)$/,
    );
    throws(() => all.excluding({ ids: [''] }), /^exclude: ids\[0\]: empty$/);
    throws(() => all.excluding({ ids: 'headless-chrome' }), /exclude: ids is a list of strings/);
    // By tag: the built-ins of one sub-kind, in the built-in matcher and a fetched list alike.
    const slackbot = { message: 'x', userAgent: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' };
    const googlebot = { message: 'x', userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' };
    ok(all.classify(slackbot).matches.some((m) => m.id === 'slackbot-link-expanding' && m.tags.includes('social-preview')));
    for (const matcher of [all, fetched]) {
      const noPreviewer = matcher.excluding({ tags: ['social-preview'] });
      ok(!noPreviewer.classify(slackbot).matches.some((m) => m.tags.includes('social-preview')), 'the sub-kind is left out');
      ok(noPreviewer.isNoise(slackbot), 'a generic bot rule still catches a previewer');
      const previews = matcher.excluding({ tags: ['social-preview', 'generic-bot'] });
      ok(!previews.isNoise(slackbot), 'previews let through');
      ok(previews.isNoise(googlebot), 'the named bots stay noise');
    }
    deepEqual(nf.Matcher.builtin({ exclude: { tags: ['social-preview'] } }).patterns, all.excluding({ tags: ['social-preview'] }).patterns);
    throws(() => all.excluding({ tags: ['social-previews'] }), /^exclude: tags\[0\]: `social-previews` is not a tag of the catalog/);
  });

  test('firstParty: every frame elsewhere is noise, matched as first-party-rule; one own frame keeps it; off unless given; the core words a refusal', async () => {
    const firstParty = { origins: ['https://shop.example.com'], paths: ['/srv/shop/'] };
    const injected = { type: 'TypeError', message: 'cart.items is undefined', frames: ['https://cdn.injected.example/7f3a9c1e.js', '<anonymous>', 'app:///inject.bundle.js', 'native'] };
    const own = { ...injected, frames: ['https://cdn.injected.example/7f3a9c1e.js', 'https://shop.example.com/assets/app.js'] };
    const plain = nf.Matcher.builtin();
    ok(!plain.isNoise(injected), 'off unless given');
    const rule = nf.Matcher.builtin({ firstParty });
    deepEqual(rule.classify(injected), {
      noise: true,
      matches: [{ id: 'first-party-rule', category: 'third-party-script', tags: [], confidence: 1, field: 'frame', index: 2 }],
    });
    ok(rule.isNoise(injected));
    ok(!rule.isNoise(own) && !rule.classify(own).noise, 'one own frame keeps it');
    ok(!rule.isNoise({ message: 'cart.items is undefined' }), 'no frames: never noise by the rule');
    ok(!rule.isNoise(new Error('cart.items is undefined').message), 'a message alone has no frames');
    deepEqual(rule.patterns, plain.patterns, 'the rule is no pattern');
    // Kept through withPatterns, excluding and a fetched set.
    ok(rule.withPatterns([{ id: 'mine', pattern: 'my noise' }]).isNoise(injected));
    ok(rule.excluding({ categories: ['bot-traffic'] }).isNoise(injected));
    ok(nf.Matcher.fromResponse(await bodyOf('A: all patterns'), { firstParty }).isNoise(injected));
    ok(plain.withFirstParty(firstParty).isNoise(injected));
    throws(
      () => nf.Matcher.builtin({ firstParty: { origins: ['shop.example.com'] } }),
      /^firstParty: origins\[0\]: `shop.example.com` is not an origin \(scheme:\/\/host\[:port\], as https:\/\/app.example.com\)$/,
    );
    throws(() => plain.withFirstParty({ paths: ['static/'] }), /^firstParty: paths\[0\]: `static\/` is not a path prefix/);
    throws(() => plain.withFirstParty({}), /^firstParty: no origins and no paths/);
    throws(() => plain.withFirstParty({ origin: ['https://shop.example.com'] }), /firstParty: unknown field `origin`/);
    throws(() => plain.withFirstParty({ origins: 'https://shop.example.com' }), /firstParty: origins is a list of strings/);
  });

  test('patterns lists what the matcher holds, in order', () => {
    const all = nf.Matcher.builtin({ minConfidence: 0 }).patterns;
    const some = nf.Matcher.builtin({ minConfidence: 0.9 }).patterns;
    ok(all.length > some.length && some.length > 0, 'a higher threshold keeps fewer');
    ok(all.every((p) => typeof p.id === 'string' && (p.type === 'string' || p.type === 'regex')));
    ok(some.every((p) => p.confidence >= 0.9));
    const added = nf.Matcher.fromPatterns(some).withPatterns([{ id: 'mine', pattern: 'my noise' }]).patterns;
    deepEqual(added.at(-1), { id: 'mine', pattern: 'my noise', type: 'string', category: '', confidence: 1 });
  });

  return list;
}

/**
 * The matcher entry against the main entry, where a runtime loads both: the
 * same built-in patterns, and the same refusals with the same texts (a
 * response body's texts from the main entry also name serde_json's line and
 * column; a JSON syntax error is worded by JSON.parse there).
 */
export function entryCases({ main, matcher }) {
  const attempt = (fn) => {
    try {
      return `ok ${JSON.stringify(fn().patterns)}`;
    } catch (error) {
      return `${error.constructor.name}: ${error.message}`;
    }
  };
  const patterns = [
    [{ pattern: 'no id' }], [{ id: 5, pattern: 'x' }], [{ id: 'a', pattern: null }], [{ id: 'a', pattern: 'xyz', type: 'glob' }],
    [{ id: 'a', pattern: 'xyz', type: undefined }], [{ id: 'a', pattern: 'xyz', category: 3 }], [{ id: 'a', pattern: 'xyz', confidence: '0.5' }],
    [{ id: 'a', pattern: '' }], [null], ['str'], { length: 1 }, [{ id: 'a', pattern: 'a(', type: 'regex' }],
    [{ id: 'x', pattern: 'a(?=b)', type: 'regex' }], [{ id: 'x', pattern: 'a\\1', type: 'regex' }], [new Map()], [{ id: true, pattern: 'x' }],
    [{ id: 'a', pattern: 'b', confidence: undefined }], [{ id: 'a', pattern: 'bcd', type: 5 }], [{ id: 'a', pattern: '(a{100}){100}', type: 'regex' }],
    [{ id: 'a', pattern: 'x'.repeat(600), type: 'regex' }], [{ id: 'a', pattern: '[[:alpha:]]', type: 'regex' }],
    [{ id: 'a', pattern: 'bcd', confidence: 0.25, category: 'mine' }, { id: 'b', pattern: '^a\\d+$', type: 'regex' }],
  ];
  const bodies = [
    '[]', '[[]]', '[[],[]]', '[[{"id":"a","pattern":"bcd"}]]', 'null', '5', '5.5', '"x"', 'true', '{"patterns":null}', '{"patterns":[5]}',
    '{"patterns":[["a","bcd"]]}', '{"patterns":[["a","bcd","regex","x",0.5]]}', '{"patterns":[["a"]]}', '{"patterns":[["a","bcd","string","x",0.5,1]]}',
    '{"patterns":[{"id":1,"pattern":"bcd"}]}', '{"patterns":[{"id":1.5,"pattern":"bcd"}]}', '{"patterns":[{"id":{},"pattern":"bcd"}]}',
    '{"patterns":[{"id":"a","pattern":"bcd","type":"x"}]}', '{"patterns":[{"id":"a","pattern":"bcd","type":5}]}', '{"error":"Invalid API key"}',
    '{"patterns":[{"id":"a"}]}', '{"patterns":{}}', '{"patterns":[{"id":"a","pattern":"bcd","confidence":1e400}]}',
    '{"patterns":[{"id":"a","pattern":"bcd","category":null}]}', '{"patterns":[{"id":"a","pattern":"a(?=b)","type":"regex"}]}',
  ];
  return [
    {
      name: 'noise-filter/matcher: the same built-in patterns as the main entry',
      fn: () => {
        for (const minConfidence of [0, 0.5, 0.95]) {
          deepEqual(matcher.Matcher.builtin({ minConfidence }).patterns, main.Matcher.builtin({ minConfidence }).patterns, `minConfidence ${minConfidence}`);
        }
      },
    },
    {
      name: 'noise-filter/matcher: the same patterns refused with the same texts as the main entry',
      fn: () => {
        // One built-in matcher per entry: `withPatterns` makes a new one and
        // leaves it as it is (compiling the catalog 40 times made this the
        // slowest test of the suite).
        const [matcherBuiltin, mainBuiltin] = [matcher.Matcher.builtin(), main.Matcher.builtin()];
        for (const list of patterns) {
          equal(attempt(() => matcher.Matcher.fromPatterns(list)), attempt(() => main.Matcher.fromPatterns(list)), 'fromPatterns');
          equal(attempt(() => matcherBuiltin.withPatterns(list)), attempt(() => mainBuiltin.withPatterns(list)), 'withPatterns');
        }
        for (const body of bodies) {
          const expected = attempt(() => main.Matcher.fromResponse(body)).replace(/ at line \d+ column \d+$/, '');
          equal(attempt(() => matcher.Matcher.fromResponse(body)), expected, body);
        }
        const syntax = attempt(() => matcher.Matcher.fromResponse('nope'));
        ok(syntax.startsWith('Error: not a pattern list response: ') && attempt(() => main.Matcher.fromResponse('nope')).startsWith('Error: not a pattern list response: '), syntax);
      },
    },
  ];
}

function substitute(value, keys, etag) {
  let out = value.replaceAll('{etag}', etag);
  for (const [name, key] of Object.entries(keys)) out = out.replaceAll(`{key:${name}}`, key);
  return out;
}

/** Header lines as a fetch `Headers` lists them: lowercase, combined, sorted. */
function fetchHeaders(lines) {
  const combined = new Map();
  for (const [name, value] of lines) {
    const lower = name.toLowerCase();
    combined.set(lower, combined.has(lower) ? `${combined.get(lower)}, ${value}` : value);
  }
  return [...combined].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function once(fn) {
  let promise;
  return () => (promise ??= fn());
}
