// The Sentry integration with the real @sentry/node from the registry: the
// events the SDK would send are recorded by a transport of the test's own
// (common/sentry-transport.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as Sentry from '@sentry/node';
import { recordingTransport } from '../common/sentry-transport.mjs';
import { DEFAULT_HOLD_MS, Matcher, noiseFilterIntegration } from 'noise-filter';

/** Starts a Sentry client that records envelopes; returns the recorded events. */
async function sentry(integration, beforeSend) {
  await Sentry.close(2000);
  const events = [];
  const transport = recordingTransport(events);
  Sentry.init({
    dsn: 'https://public@sentry.example.invalid/1',
    transport,
    defaultIntegrations: false,
    integrations: [integration],
    beforeSend,
  });
  return events;
}

const wallet = () => new TypeError('Cannot redefine property: ethereum');
const real = () => new Error('invoice total is negative');

test('@sentry/node: noise is not sent, real errors are, the user beforeSend still runs', async () => {
  const noisy = [];
  const seenByBeforeSend = [];
  const events = await sentry(
    noiseFilterIntegration({ matcher: Matcher.builtin(), onNoise: (verdict) => noisy.push(verdict) }),
    (event) => { seenByBeforeSend.push(event.exception?.values?.[0]?.value); return event; },
  );
  Sentry.captureException(wallet());
  Sentry.captureException(real());
  Sentry.captureMessage('Script error.');
  await Sentry.flush(5000);
  assert.deepEqual(events.map((e) => e.exception?.values?.[0]?.value ?? e.message), ['invoice total is negative']);
  assert.equal(noisy.length, 2);
  assert.ok(noisy.every((v) => v.noise && v.matches.length > 0));
  assert.deepEqual(seenByBeforeSend, ['invoice total is negative']);
});

test('@sentry/node: tag mode sends noise with the verdict as tags', async () => {
  const events = await sentry(noiseFilterIntegration({ matcher: Matcher.builtin(), mode: 'tag' }));
  Sentry.captureException(wallet());
  Sentry.captureException(real());
  await Sentry.flush(5000);
  assert.equal(events.length, 2);
  const [noise, clean] = events;
  assert.equal(noise.tags.noise_filter, 'noise');
  assert.match(noise.tags['noise_filter.patterns'], /ethereum/);
  assert.equal(clean.tags?.noise_filter, undefined);
});

test('@sentry/node: with hold 0, a matcher still loading lets events through, then filters', async () => {
  let resolve;
  const loading = new Promise((r) => { resolve = r; });
  const events = await sentry(noiseFilterIntegration({ matcher: loading, hold: 0 }));
  Sentry.captureException(wallet());
  await Sentry.flush(5000);
  assert.equal(events.length, 1, 'not held back while the matcher loads');
  resolve(Matcher.builtin());
  await loading;
  Sentry.captureException(wallet());
  Sentry.captureException(real());
  await Sentry.flush(5000);
  assert.equal(events.length, 2);
  assert.equal(events[1].exception.values[0].value, 'invoice total is negative');
});

test('@sentry/node: an event reported while the matcher loads waits for it, then is decided', async () => {
  let resolve;
  const loading = new Promise((r) => { resolve = r; });
  const events = await sentry(noiseFilterIntegration({ matcher: loading }));
  Sentry.captureException(wallet());
  Sentry.captureException(real());
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(events.length, 0, 'held while the matcher loads');
  resolve(Matcher.builtin());
  await Sentry.flush(5000);
  assert.deepEqual(events.map((e) => e.exception.values[0].value), ['invoice total is negative']);
});

test('@sentry/node: the hold is bounded: past it an event is sent unfiltered, never dropped for lack of a matcher', async () => {
  const never = new Promise(() => {});
  const events = await sentry(noiseFilterIntegration({ matcher: never, hold: 300 }));
  const started = Date.now();
  Sentry.captureException(wallet());
  await Sentry.flush(5000);
  assert.deepEqual(events.map((e) => e.exception.values[0].value), ['Cannot redefine property: ethereum']);
  assert.ok(Date.now() - started >= 290, 'held for the bound first');
  assert.equal(DEFAULT_HOLD_MS, 6000);
  assert.throws(() => noiseFilterIntegration({ matcher: never, hold: -1 }), /hold/);
});

test('@sentry/node: exclude leaves patterns out; an exception in onNoise or the matcher keeps the event', async () => {
  const headless = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36';
  const events = await sentry(noiseFilterIntegration({ matcher: Matcher.builtin(), exclude: { ids: ['headless-chrome'] } }));
  Sentry.setExtra('run', 'e2e');
  Sentry.captureEvent({ message: 'order total is negative', request: { headers: { 'User-Agent': headless } } });
  Sentry.captureEvent({ message: 'x', request: { headers: { 'User-Agent': 'Mozilla/5.0 (compatible; Googlebot/2.1)' } } });
  await Sentry.flush(5000);
  assert.deepEqual(events.map((e) => e.message), ['order total is negative'], 'the headless browser is kept, a crawler still dropped');

  const heard = [];
  const throwing = { classify() { throw new Error('broken matcher'); } };
  const kept = await sentry(noiseFilterIntegration({ matcher: throwing, onError: (e) => heard.push(e.message) }));
  Sentry.captureException(wallet());
  await Sentry.flush(5000);
  assert.equal(kept.length, 1);
  const counted = await sentry(noiseFilterIntegration({ matcher: Matcher.builtin(), onNoise: () => { throw new Error('counter broke'); }, onError: (e) => heard.push(e.message) }));
  Sentry.captureException(wallet());
  await Sentry.flush(5000);
  assert.equal(counted.length, 0, 'onNoise failing does not keep noise');
  assert.deepEqual(heard, ['broken matcher', 'counter broke']);

  // An exclusion the core refuses: told once, and every event is kept.
  heard.length = 0;
  const refused = await sentry(noiseFilterIntegration({ matcher: Matcher.builtin(), exclude: { categories: ['bots'] }, onError: (e) => heard.push(e.message) }));
  Sentry.captureException(wallet());
  Sentry.captureException(wallet());
  await Sentry.flush(5000);
  assert.equal(refused.length, 2);
  assert.equal(heard.length, 1);
  assert.match(heard[0], /^exclude: categories\[0\]: `bots` is not a category/);
});

test('@sentry/node: firstParty drops an error whose frames are all elsewhere, keeps one through the own code, in either mode', async () => {
  const firstParty = { origins: ['https://shop.example.com'] };
  const injected = (frames) => ({
    exception: { values: [{ type: 'TypeError', value: 'cart.items is undefined', stacktrace: { frames: frames.map((filename) => ({ filename })) } }] },
  });
  const noisy = [];
  const events = await sentry(noiseFilterIntegration({ matcher: Matcher.builtin(), firstParty, onNoise: (verdict) => noisy.push(verdict) }));
  Sentry.captureEvent(injected(['https://cdn.injected.example/7f3a9c1e-2b4d.js', 'app:///inject.bundle.js']));
  Sentry.captureEvent(injected(['https://cdn.injected.example/7f3a9c1e-2b4d.js', 'https://shop.example.com/assets/app.js']));
  Sentry.captureEvent({ message: 'cart.items is undefined' });
  await Sentry.flush(5000);
  assert.deepEqual(events.map((e) => e.exception?.values?.[0]?.stacktrace?.frames?.length ?? e.message), [2, 'cart.items is undefined']);
  assert.deepEqual(noisy.map((v) => v.matches.map((m) => [m.id, m.category, m.index])), [[['first-party-rule', 'third-party-script', 1]]]);

  const tagged = await sentry(noiseFilterIntegration({ matcher: Matcher.builtin(), firstParty, mode: 'tag' }));
  Sentry.captureEvent(injected(['https://cdn.injected.example/7f3a9c1e-2b4d.js']));
  await Sentry.flush(5000);
  assert.equal(tagged[0].tags.noise_filter, 'noise');
  assert.equal(tagged[0].tags['noise_filter.patterns'], 'first-party-rule');

  // Without the option the same event is sent: off unless given.
  const plain = await sentry(noiseFilterIntegration({ matcher: Matcher.builtin() }));
  Sentry.captureEvent(injected(['https://cdn.injected.example/7f3a9c1e-2b4d.js']));
  await Sentry.flush(5000);
  assert.equal(plain.length, 1);

  // A rule the core refuses: told once, and every event is kept.
  const heard = [];
  const refused = await sentry(noiseFilterIntegration({ matcher: Matcher.builtin(), firstParty: { origins: ['shop.example.com'] }, onError: (e) => heard.push(e.message) }));
  Sentry.captureEvent(injected(['https://cdn.injected.example/7f3a9c1e-2b4d.js']));
  Sentry.captureEvent(injected(['https://cdn.injected.example/7f3a9c1e-2b4d.js']));
  await Sentry.flush(5000);
  assert.equal(refused.length, 2);
  assert.equal(heard.length, 1);
  assert.match(heard[0], /^firstParty: origins\[0\]: `shop.example.com` is not an origin/);
});
