// The integrations for the browser-only SDKs, each the real package from
// the registry, in Chromium: Datadog Browser RUM (`beforeSend`) and PostHog
// (`before_send`). Each SDK posts to the test's own server (browser.test.mjs:
// Datadog through its `proxy` option, PostHog as its `api_host`), which
// records what reaches it; the page reads that record back (`/intake-log`).
// The matcher is still loading when the SDKs start (`noise-filter/matcher/init`):
// events pass until it is there (a promise's value is taken a microtask
// after it settles: the hooks' too). The outcome goes to `window.__results`.
import { datadogRum } from '@datadog/browser-rum';
import posthog from 'posthog-js';
import { check, publish } from './checks.js';
import { Matcher, datadogBeforeSend, init, posthogBeforeSend } from 'noise-filter/matcher/init';

const matcher = init().then(() => Matcher.builtin());
/**
 * The matcher as one SDK's hook gets it: a promise that settles (with the
 * loaded matcher) only when the page says, so that "while it loads" is
 * that SDK's first check, whatever the other's checks waited for.
 */
function loadingUntilOpened() {
  let open;
  const promise = new Promise((resolve) => {
    open = () => resolve(matcher.then(throwingOn));
  });
  return { promise, open };
}
/** An event whose message is this makes the SDKs' matcher throw: it must be sent all the same. */
const THROWS = 'the matcher throws on this one: Cannot redefine property: ethereum';
const throwingOn = (loaded) => ({
  classify(input) {
    if (input.message === THROWS) throw new Error('broken matcher');
    return loaded.classify(input);
  },
});
const forPosthog = loadingUntilOpened();
const forDatadog = loadingUntilOpened();
const wallet = () => new TypeError('Cannot redefine property: ethereum');
const injected = () => {
  const error = new Error('x is not a function');
  error.stack = 'Error: x is not a function\n    at run (chrome-extension://nkbihfbeogaeaoehlefnkodbefgpgknn/inpage.js:1:2)';
  return error;
};
const real = (text) => new Error(text);
const throwing = { classify() { throw new Error('broken matcher'); } };

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

/** What the test's server has received under `prefix`: `{path, body}` with the body as text. */
async function received(prefix) {
  const log = await (await fetch('/intake-log')).json();
  return log.filter((r) => r.path.startsWith(prefix));
}

/** Polls `read` until `done(value)`, calling `poke` before each look; the last value. */
async function until(read, done, what, poke) {
  let value;
  for (let i = 0; i < 100; i += 1) {
    poke?.();
    value = await read();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: ${JSON.stringify(value).slice(0, 2000)}`);
}

// ------------------------------------------------------------- PostHog --

const phNoise = [];
const phErrors = [];
const phSeen = [];
posthog.init('phc_noise_filter_test', {
  api_host: `${location.origin}/ph`,
  autocapture: false,
  capture_pageview: false,
  capture_pageleave: false,
  disable_session_recording: true,
  disable_surveys: true,
  advanced_disable_flags: true,
  persistence: 'memory',
  request_batching: false,
  disable_compression: true,
  // Playwright's Chromium sets `navigator.webdriver`, which PostHog takes for a bot.
  opt_out_useragent_filter: true,
  before_send: [
    posthogBeforeSend({ matcher: forPosthog.promise, onNoise: (verdict) => phNoise.push(verdict), onError: (error) => phErrors.push(error) }),
    // The user's own function: PostHog runs it next, on the events kept.
    (event) => {
      if (event.event === '$exception') phSeen.push(event.properties.$exception_list[0].value);
      return event;
    },
  ],
});

/** The `$exception` events PostHog sent: `[value, properties]`. */
async function posthogSent() {
  const events = [];
  for (const { body } of await received('/ph/')) {
    let parsed;
    try {
      parsed = JSON.parse(body);
    } catch {
      continue; // not an event batch (remote config and the like)
    }
    for (const event of Array.isArray(parsed) ? parsed : parsed.batch ?? [parsed]) {
      if (event?.event === '$exception') events.push([event.properties.$exception_list[0].value, event.properties]);
    }
  }
  return events;
}

// --------------------------------------------------------- Datadog RUM --

const ddNoise = [];
const ddSeen = [];
const ddErrors = [];
datadogRum.init({
  applicationId: '00000000-0000-4000-8000-000000000000',
  clientToken: 'pub00000000000000000000000000000000',
  site: 'datadoghq.com',
  service: 'noise-filter-test',
  proxy: `${location.origin}/dd-intake`,
  sessionSampleRate: 100,
  sessionReplaySampleRate: 0,
  trackResources: false,
  trackLongTasks: false,
  trackUserInteractions: false,
  // The test leaves the page by a synthetic `beforeunload` (below): an untrusted event.
  allowUntrustedEvents: true,
  beforeSend: datadogBeforeSend({
    matcher: forDatadog.promise,
    onNoise: (verdict) => ddNoise.push(verdict),
    onError: (error) => ddErrors.push(error),
    // The user's own hook: runs after the filter, on the events it keeps.
    beforeSend: (event) => {
      if (event.type === 'error') ddSeen.push(event.error.message);
      return event.type !== 'error' || event.error.message !== 'dropped by the user hook';
    },
  }),
});

/** The error messages of the RUM events the intake received. */
async function datadogSent() {
  const messages = [];
  for (const { body } of await received('/dd-intake')) {
    for (const line of body.split('\n')) {
      if (line.trim() === '') continue;
      const event = JSON.parse(line);
      if (event.type === 'error') messages.push(event.error.message);
    }
  }
  return messages;
}
// Datadog sends what it has batched when the page may be left (the errors
// of a session not yet started wait for it: hence a flush at each look).
const flushDatadog = () => window.dispatchEvent(new Event('beforeunload'));

await check('PostHog: an exception while the matcher loads is sent, not held back', async () => {
  posthog.captureException(wallet());
  const sent = await until(posthogSent, (s) => s.length >= 1, 'the first exception');
  assert(sent.length === 1 && sent[0][0] === 'Cannot redefine property: ethereum', JSON.stringify(sent.map(([v]) => v)));
});

await check('Datadog RUM: an error while the matcher loads is sent, not held back', async () => {
  datadogRum.addError(wallet());
  await until(datadogSent, (sent) => sent.includes('Cannot redefine property: ethereum'), 'the first error', flushDatadog);
});

forDatadog.open();
forPosthog.open();
await forDatadog.promise;
await forPosthog.promise;

await check('Datadog RUM: once loaded, noise is not sent, real errors are, the user beforeSend runs after the filter; an error the matcher throws on is sent', async () => {
  datadogRum.addError(wallet());
  datadogRum.addError(injected());
  datadogRum.addError(real('invoice total is negative'));
  datadogRum.addError(real('dropped by the user hook'));
  datadogRum.addError(new TypeError(THROWS));
  datadogRum.addError(real('the last one'));
  const sent = await until(datadogSent, (s) => s.includes('the last one'), 'the real errors', flushDatadog);
  assert(
    JSON.stringify(sent) === JSON.stringify(['Cannot redefine property: ethereum', 'invoice total is negative', THROWS, 'the last one']),
    JSON.stringify(sent),
  );
  assert(ddNoise.length === 2, `onNoise heard ${ddNoise.length}`);
  assert(
    JSON.stringify(ddSeen) === JSON.stringify(['Cannot redefine property: ethereum', 'invoice total is negative', 'dropped by the user hook', THROWS, 'the last one']),
    JSON.stringify(ddSeen),
  );
  assert(ddErrors.length === 1 && ddErrors[0].message === 'broken matcher', ddErrors.map(String).join('; '));
});

await check('Datadog RUM: tag mode and a throwing matcher keep the event (the SDK hook, called as Datadog calls it)', async () => {
  const tag = datadogBeforeSend({ matcher: await matcher, mode: 'tag' });
  const event = { type: 'error', error: { message: 'Cannot redefine property: ethereum', type: 'TypeError', source: 'custom' }, context: { team: 'web' } };
  assert(tag(event, { error: wallet() }) === true, 'kept in tag mode');
  assert(event.context.team === 'web' && event.context.noise_filter.noise === true && event.context.noise_filter.patterns.length > 0, JSON.stringify(event.context));
  const heard = [];
  const failing = datadogBeforeSend({ matcher: throwing, onError: (e) => heard.push(e.message) });
  assert(failing({ type: 'error', error: { message: 'Cannot redefine property: ethereum', source: 'custom' } }, {}) === true, 'kept');
  assert(failing({ type: 'error', error: 'not an object' }, {}) === true, 'an event it cannot read is kept');
  assert(heard.length === 2 && heard[0] === 'broken matcher' && /cannot read this Datadog RUM event/.test(heard[1]), JSON.stringify(heard));
});

// ------------------------------------------------------------- PostHog --

// (PostHog drops exceptions thrown in an extension's frames itself, before
// `before_send`: the noise here is a wallet's message and a browser's own.)
await check('PostHog: once loaded, noise is not sent, real errors are, the next before_send still runs; an exception the matcher throws on is sent', async () => {
  posthog.captureException(wallet());
  posthog.captureException(real('ResizeObserver loop completed with undelivered notifications.'));
  posthog.captureException(real('order total is negative'));
  posthog.captureException(new TypeError(THROWS));
  await until(posthogSent, (s) => s.length >= 3, 'the real error');
  await new Promise((r) => setTimeout(r, 500)); // nothing else comes
  // One request an event: they may arrive in any order.
  const sent = (await posthogSent()).map(([value]) => value).sort();
  assert(JSON.stringify(sent) === JSON.stringify(['Cannot redefine property: ethereum', 'order total is negative', THROWS].sort()), JSON.stringify(sent));
  assert(phNoise.length === 2, `onNoise heard ${phNoise.length}`);
  assert(JSON.stringify(phSeen) === JSON.stringify(['Cannot redefine property: ethereum', 'order total is negative', THROWS]), JSON.stringify(phSeen));
  assert(phErrors.length === 1 && phErrors[0].message === 'broken matcher', phErrors.map(String).join('; '));
});

await check('PostHog: tag mode sends noise with the verdict as properties; a throwing matcher keeps the event', async () => {
  const tag = posthogBeforeSend({ matcher: await matcher, mode: 'tag' });
  const heard = [];
  const failing = posthogBeforeSend({ matcher: throwing, onError: (e) => heard.push(e.message) });
  posthog.set_config({ before_send: [tag] });
  posthog.captureException(wallet());
  const tagged = await until(posthogSent, (s) => s.length >= 4, 'the tagged noise');
  const [value, properties] = tagged.find(([, p]) => p.noise_filter !== undefined) ?? [];
  assert(value === 'Cannot redefine property: ethereum' && properties.noise_filter === true && properties.noise_filter_patterns.length > 0, JSON.stringify(tagged.map(([v, p]) => [v, p.noise_filter])).slice(0, 500));
  posthog.set_config({ before_send: [failing] });
  posthog.captureException(wallet());
  const kept = await until(posthogSent, (s) => s.length >= 5, 'the event the failing matcher kept');
  const wallets = kept.filter(([v, p]) => v === 'Cannot redefine property: ethereum' && p.noise_filter === undefined);
  assert(wallets.length === 2, JSON.stringify(kept.map(([v, p]) => [v, p.noise_filter])).slice(0, 500)); // the one sent while loading, and this one
  assert(heard.length === 1 && heard[0] === 'broken matcher', JSON.stringify(heard));
  const pageview = { event: '$pageview', properties: {} };
  assert(failing(pageview) === pageview && heard.length === 1, 'other events pass unread');
});

publish();
