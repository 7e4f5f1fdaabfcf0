// A page as a Sentry user writes it: the real @sentry/browser, started before
// the matcher's wasm has loaded (`noise-filter/matcher/init`: no top-level
// await), with the integration given the matcher still loading and told
// not to hold events (`hold: 0`). A transport
// of the page's own records what the SDK would send; the outcome goes to
// `window.__results` for browser.test.mjs.
import * as Sentry from '@sentry/browser';
import { recordingTransport } from '../common/sentry-transport.mjs';
import { check, publish } from './checks.js';
import { Matcher, init, noiseFilterIntegration } from 'noise-filter/matcher/init';

const sent = [];
const transport = recordingTransport(sent);

const noisy = [];
const matcher = init().then(() => Matcher.builtin());
Sentry.init({
  dsn: 'https://public@sentry.example.invalid/1',
  transport,
  defaultIntegrations: false,
  // hold 0: events pass while the matcher loads (the held case is the
  // README page's, under a throttled network: browser.test.mjs).
  integrations: [noiseFilterIntegration({ matcher, hold: 0, onNoise: (verdict) => noisy.push(verdict) })],
});
const value = (e) => e.exception?.values?.[0]?.value ?? e.message;

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

await check('an error reported while the matcher loads is sent, not held back', async () => {
  Sentry.captureException(new TypeError('Cannot redefine property: ethereum'));
  await Sentry.flush(5000);
  assert(sent.length === 1 && value(sent[0]) === 'Cannot redefine property: ethereum', JSON.stringify(sent.map(value)));
});

await matcher;

await check('once loaded, noise is dropped and real errors are sent', async () => {
  sent.length = 0;
  Sentry.captureException(new TypeError('Cannot redefine property: ethereum'));
  const injected = new Error('x is not a function');
  injected.stack = 'Error: x is not a function\n    at run (chrome-extension://nkbihfbeogaeaoehlefnkodbefgpgknn/inpage.js:1:2)';
  Sentry.captureException(injected);
  Sentry.captureException(new Error('invoice total is negative'));
  await Sentry.flush(5000);
  assert(JSON.stringify(sent.map(value)) === JSON.stringify(['invoice total is negative']), JSON.stringify(sent.map(value)));
  assert(noisy.length === 2, `onNoise heard ${noisy.length}`);
});

publish();
