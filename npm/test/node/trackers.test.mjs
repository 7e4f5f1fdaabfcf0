// The integrations for Bugsnag, Rollbar and Honeybadger with their real SDKs
// from the registry, in Node (each runs there): Bugsnag and Rollbar post to
// a local HTTP server given as their endpoint; Honeybadger's Node transport
// drops an endpoint's port, so its transport is replaced by one that
// records. Noise is not sent, real errors are, the user's own hook still
// runs; an exception inside the matcher keeps the event. (Datadog RUM and
// PostHog are browser SDKs: browser/trackers.js, in Chromium.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import Bugsnag from '@bugsnag/js';
import Rollbar from 'rollbar';
import Honeybadger from '@honeybadger-io/js';
import * as nf from 'noise-filter';
import { Matcher, bugsnagOnError, honeybadgerBeforeNotify, rollbarCheckIgnore } from 'noise-filter';
import { trackers } from '../common/trackers.mjs';

const wallet = () => new TypeError('Cannot redefine property: ethereum');
const injected = () => {
  const error = new Error('x is not a function');
  error.stack = 'Error: x is not a function\n    at run (chrome-extension://nkbihfbeogaeaoehlefnkodbefgpgknn/inpage.js:1:2)';
  return error;
};
const real = () => new Error('invoice total is negative');
const throwing = { classify() { throw new Error('broken matcher'); } };

/** A local HTTP server that records each request's path and JSON body. */
async function endpoint() {
  const received = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', () => {
      received.push({ path: request.url, body: body === '' ? undefined : JSON.parse(body) });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"result":{"id":"1","uuid":"1"}}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${server.address().port}`, received, close: () => server.close() };
}

const until = async (condition, what) => {
  for (let i = 0; i < 100 && !condition(); i += 1) await new Promise((r) => setTimeout(r, 50));
  assert.ok(condition(), what);
};

// ------------------------------------------------------------- Bugsnag --

test('@bugsnag/js in Node: noise is not sent, real errors are, the next onError still runs; tag mode; a throwing matcher keeps the event', async () => {
  const server = await endpoint();
  try {
    const notified = () => server.received.filter((r) => r.path === '/notify').map((r) => r.body.events[0]);
    const messages = () => notified().map((e) => e.exceptions[0].message);
    const noisy = [];
    const seen = [];
    const heard = [];
    const client = Bugsnag.createClient({
      apiKey: '0123456789abcdef0123456789abcdef',
      endpoints: { notify: `${server.base}/notify`, sessions: `${server.base}/sessions` },
      autoTrackSessions: false,
      autoDetectErrors: false,
      logger: null,
      onError: [
        bugsnagOnError({ matcher: Matcher.builtin(), onNoise: (verdict) => noisy.push(verdict) }),
        (event) => { seen.push(event.errors[0].errorMessage); },
      ],
    });
    const notify = (error) => new Promise((resolve) => client.notify(error, undefined, resolve));
    await notify(wallet());
    await notify(injected());
    await notify(real());
    assert.deepEqual(messages(), ['invoice total is negative']);
    assert.equal(noisy.length, 2);
    assert.deepEqual(seen, ['invoice total is negative'], 'the user onError, after the filter, sees what it keeps');

    server.received.length = 0;
    const tagging = Bugsnag.createClient({
      apiKey: '0123456789abcdef0123456789abcdef',
      endpoints: { notify: `${server.base}/notify`, sessions: `${server.base}/sessions` },
      autoTrackSessions: false,
      autoDetectErrors: false,
      logger: null,
      onError: bugsnagOnError({ matcher: Matcher.builtin(), mode: 'tag' }),
    });
    await new Promise((resolve) => tagging.notify(wallet(), undefined, resolve));
    await new Promise((resolve) => tagging.notify(real(), undefined, resolve));
    const [noise, clean] = notified();
    assert.equal(noise.metaData.noise_filter.noise, true);
    assert.ok(noise.metaData.noise_filter.patterns.length > 0);
    assert.equal(clean.metaData.noise_filter, undefined);

    server.received.length = 0;
    const failing = Bugsnag.createClient({
      apiKey: '0123456789abcdef0123456789abcdef',
      endpoints: { notify: `${server.base}/notify`, sessions: `${server.base}/sessions` },
      autoTrackSessions: false,
      autoDetectErrors: false,
      logger: null,
      onError: bugsnagOnError({ matcher: throwing, onError: (error) => heard.push(error.message) }),
    });
    await new Promise((resolve) => failing.notify(wallet(), undefined, resolve));
    assert.deepEqual(messages(), ['Cannot redefine property: ethereum'], 'kept when the matcher throws');
    assert.deepEqual(heard, ['broken matcher']);
  } finally {
    server.close();
  }
});

test('@bugsnag/js: while the matcher loads, events pass (none waits); then noise is dropped', async () => {
  const server = await endpoint();
  try {
    let resolve;
    const loading = new Promise((r) => { resolve = r; });
    const client = Bugsnag.createClient({
      apiKey: '0123456789abcdef0123456789abcdef',
      endpoints: { notify: `${server.base}/notify`, sessions: `${server.base}/sessions` },
      autoTrackSessions: false,
      autoDetectErrors: false,
      logger: null,
      onError: bugsnagOnError({ matcher: loading }),
    });
    await new Promise((r) => client.notify(wallet(), undefined, r));
    resolve(Matcher.builtin());
    await loading;
    await new Promise((r) => client.notify(wallet(), undefined, r));
    const sent = server.received.filter((r) => r.path === '/notify');
    assert.equal(sent.length, 1, 'the first passed, the second was noise');
  } finally {
    server.close();
  }
});

// ------------------------------------------------------------- Rollbar --

/** A Rollbar notifier posting to `base`; resolves each `error(...)` once Rollbar is done with it. */
function rollbar(base, options) {
  const notifier = new Rollbar({
    accessToken: 'abcdefabcdefabcdefabcdefabcdefab',
    endpoint: `${base}/api/1/`,
    captureUncaught: false,
    captureUnhandledRejections: false,
    logLevel: 'critical',
    verbose: false,
    ...options,
  });
  return { notifier, error: (value) => new Promise((resolve) => notifier.error(value, () => resolve())) };
}

const rollbarMessages = (received) =>
  received.map(({ body }) => body.data.body.trace_chain?.[0]?.exception?.message ?? body.data.body.message?.body);

test('rollbar in Node: noise is not sent, real errors are, the user checkIgnore still runs', async () => {
  const server = await endpoint();
  try {
    const noisy = [];
    const asked = [];
    const { error } = rollbar(server.base, {
      checkIgnore: rollbarCheckIgnore({
        matcher: Matcher.builtin(),
        onNoise: (verdict) => noisy.push(verdict),
        checkIgnore: (isUncaught, args, item) => {
          asked.push(item.body.trace_chain?.[0]?.exception?.message ?? item.body.message?.body);
          return item.body.message?.body === 'ignored by the user';
        },
      }),
    });
    await error(wallet());
    await error(injected());
    await error('Script error.');
    await error(real());
    await error('ignored by the user');
    assert.deepEqual(rollbarMessages(server.received), ['invoice total is negative']);
    assert.equal(noisy.length, 3);
    assert.deepEqual(asked, ['invoice total is negative', 'ignored by the user'], 'the user checkIgnore runs after the filter');
    assert.throws(() => rollbarCheckIgnore({ matcher: Matcher.builtin(), mode: 'tag' }), /mode is 'drop'/);
  } finally {
    server.close();
  }
});

test('rollbar: a throwing matcher keeps the item (and Rollbar keeps the hook); a promised matcher lets items pass first', async () => {
  const server = await endpoint();
  try {
    const heard = [];
    const failing = rollbar(server.base, { checkIgnore: rollbarCheckIgnore({ matcher: throwing, onError: (e) => heard.push(e.message) }) });
    await failing.error(wallet());
    await failing.error(wallet());
    assert.deepEqual(rollbarMessages(server.received), ['Cannot redefine property: ethereum', 'Cannot redefine property: ethereum']);
    assert.deepEqual(heard, ['broken matcher', 'broken matcher'], 'asked each time: the hook never threw into Rollbar');

    server.received.length = 0;
    let resolve;
    const loading = new Promise((r) => { resolve = r; });
    const later = rollbar(server.base, { checkIgnore: rollbarCheckIgnore({ matcher: loading }) });
    await later.error(wallet());
    resolve(Matcher.builtin());
    await loading;
    await later.error(wallet());
    await later.error(real());
    assert.deepEqual(rollbarMessages(server.received), ['Cannot redefine property: ethereum', 'invoice total is negative']);
  } finally {
    server.close();
  }
});

// --------------------------------------------------------- Honeybadger --

/** A Honeybadger client whose transport records the notices it would send. */
function honeybadger(handlers) {
  const sent = [];
  const client = Honeybadger.factory({
    apiKey: 'hbp_test',
    environment: 'test',
    reportData: true, // Honeybadger sends nothing from a `test` environment otherwise
    enableUncaught: false,
    enableUnhandledRejection: false,
    logger: { log() {}, info() {}, debug() {}, warn() {}, error() {} },
  });
  client.__transport = {
    defaultHeaders: () => ({}),
    async send(options, payload) {
      if (String(options.endpoint).includes('/notices')) sent.push(payload);
      return { statusCode: 201, body: '{"id":"1"}' };
    },
  };
  for (const handler of handlers) client.beforeNotify(handler);
  return { sent, notify: (error) => client.notifyAsync(error).catch(() => {}) };
}

test('@honeybadger-io/js in Node: noise is not sent, real errors are, the user beforeNotify still runs; tag mode; a throwing matcher keeps the notice; a loading one lets notices pass', async () => {
  const noisy = [];
  const seen = [];
  const { sent, notify } = honeybadger([
    honeybadgerBeforeNotify({ matcher: Matcher.builtin(), onNoise: (verdict) => noisy.push(verdict) }),
    (notice) => { seen.push(notice.message); },
  ]);
  await notify(wallet());
  await notify(injected());
  await notify(real());
  await until(() => sent.length >= 1, 'the real error is sent');
  assert.deepEqual(sent.map((p) => p.error.message), ['invoice total is negative']);
  assert.equal(noisy.length, 2);
  assert.deepEqual(seen, ['Cannot redefine property: ethereum', 'x is not a function', 'invoice total is negative'], 'Honeybadger runs every handler');

  const tagged = honeybadger([honeybadgerBeforeNotify({ matcher: Matcher.builtin(), mode: 'tag' })]);
  await tagged.notify(wallet());
  await tagged.notify(real());
  await until(() => tagged.sent.length === 2, 'both sent in tag mode');
  const [noise, clean] = tagged.sent;
  assert.deepEqual(noise.error.tags, ['noise_filter']);
  assert.ok(noise.request.context.noise_filter.patterns.length > 0);
  assert.deepEqual(clean.error.tags, []);

  const heard = [];
  const failing = honeybadger([honeybadgerBeforeNotify({ matcher: throwing, onError: (e) => heard.push(e.message) })]);
  await failing.notify(wallet());
  await until(() => failing.sent.length === 1, 'kept when the matcher throws');
  assert.deepEqual(heard, ['broken matcher']);

  // While a promised matcher loads, notices pass; then noise is dropped.
  let resolve;
  const loading = new Promise((r) => { resolve = r; });
  const later = honeybadger([honeybadgerBeforeNotify({ matcher: loading })]);
  await later.notify(wallet());
  await until(() => later.sent.length === 1, 'sent while the matcher loads');
  resolve(Matcher.builtin());
  await loading;
  await later.notify(wallet());
  await later.notify(real());
  await until(() => later.sent.length === 2, 'the real error sent');
  assert.deepEqual(later.sent.map((p) => p.error.message), ['Cannot redefine property: ethereum', 'invoice total is negative']);
});

// -------------------------------------------------------------- parity --


// Written by `cargo xtask npm test`: the evaluation set and the shared
// fixtures' events, with the core's native verdicts on them.
const oracle = JSON.parse(readFileSync(new URL('../../pkg/oracle.json', import.meta.url), 'utf8'));

for (const tracker of trackers) {
  test(`parity: ${tracker.name} gives the matcher's verdict on each of the ${oracle.events.length} events`, () => {
    const matcher = nf.Matcher.builtin({ minConfidence: 0.5 });
    let heard;
    const errors = [];
    const hook = tracker.hook(nf, { matcher, onNoise: (verdict) => { heard = verdict; }, onError: (e) => errors.push(e) });
    const browser = globalThis.navigator;
    try {
      oracle.events.forEach(({ event }, i) => {
        const expected = oracle.verdicts.builtin[i];
        // The verdict of the matcher on the event itself (the core's, native).
        assert.deepEqual(matcher.classify(event), expected, `the matcher on event ${i}`);
        if (tracker.browserUserAgent) Object.defineProperty(globalThis, 'navigator', { value: { userAgent: event.userAgent }, configurable: true });
        heard = undefined;
        const answer = tracker.call(hook, tracker.write(event));
        assert.equal(tracker.dropped(answer), expected.noise, `dropped, event ${i}: ${JSON.stringify(event).slice(0, 300)}`);
        assert.deepEqual(heard ?? { noise: false, matches: [] }, expected, `the verdict onNoise heard, event ${i}`);
      });
    } finally {
      Object.defineProperty(globalThis, 'navigator', { value: browser, configurable: true, writable: true });
    }
    assert.deepEqual(errors, []);
  });
}

test('an event an integration cannot read is kept and told to onError; one that is not an error passes unread', () => {
  const heard = [];
  const options = { matcher: nf.Matcher.builtin(), onError: (e) => heard.push(e.message) };
  assert.equal(nf.bugsnagOnError(options)({ errors: 'none' }), true);
  assert.equal(nf.rollbarCheckIgnore(options)(false, [], { nobody: true }), false);
  assert.equal(nf.honeybadgerBeforeNotify(options)(null), true);
  const broken = { event: '$exception', properties: {} };
  assert.equal(nf.posthogBeforeSend(options)(broken), broken);
  assert.equal(nf.datadogBeforeSend(options)({ type: 'error', error: null }, {}), true);
  assert.deepEqual(heard.map((m) => m.replace(/:.*/, '')), [
    'noise-filter',
    'noise-filter',
    'noise-filter',
    'noise-filter',
    'noise-filter',
  ]);
  assert.match(heard[0], /cannot read this Bugsnag event: `errors` holds no error/);
  heard.length = 0;
  const view = { type: 'view', view: { url: 'https://a.example/' } };
  assert.equal(nf.datadogBeforeSend(options)(view, {}), true);
  const pageview = { event: '$pageview', properties: {} };
  assert.equal(nf.posthogBeforeSend(options)(pageview), pageview);
  assert.deepEqual(heard, []);
  assert.throws(() => nf.bugsnagOnError({}), /bugsnagOnError: a matcher, a client or a promise of one is needed/);
  assert.throws(() => nf.posthogBeforeSend({ matcher: nf.Matcher.builtin(), mode: 'keep' }), /mode is 'drop' or 'tag'/);
  assert.throws(() => nf.datadogBeforeSend({ matcher: nf.Matcher.builtin(), excludes: {} }), /unknown option `excludes`/);
});

test('exclude reaches each integration as it reaches the Sentry integration', () => {
  const headless = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36';
  const event = { type: 'Error', message: 'order total is negative', frames: [], userAgent: headless };
  for (const tracker of trackers) {
    const browser = globalThis.navigator;
    Object.defineProperty(globalThis, 'navigator', { value: { userAgent: headless }, configurable: true });
    try {
      const all = tracker.hook(nf, { matcher: nf.Matcher.builtin() });
      const kept = tracker.hook(nf, { matcher: nf.Matcher.builtin(), exclude: { ids: ['headless-chrome'] } });
      assert.equal(tracker.dropped(tracker.call(all, tracker.write(event))), true, `${tracker.name}: a headless browser is noise`);
      assert.equal(tracker.dropped(tracker.call(kept, tracker.write(event))), false, `${tracker.name}: not once excluded`);
    } finally {
      Object.defineProperty(globalThis, 'navigator', { value: browser, configurable: true, writable: true });
    }
  }
});
