// The Sentry integration with the real @sentry/node from the registry: the
// events the SDK would send are recorded by a transport of the test's own
// (common/sentry-transport.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as Sentry from '@sentry/node';
import { recordingTransport } from '../common/sentry-transport.mjs';
import { Matcher, noiseFilterIntegration } from 'noise-filter';

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

test('@sentry/node: a matcher still loading lets events through, then filters', async () => {
  let resolve;
  const loading = new Promise((r) => { resolve = r; });
  const events = await sentry(noiseFilterIntegration({ matcher: loading }));
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
