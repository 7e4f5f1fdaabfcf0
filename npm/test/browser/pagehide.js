// An error held by the Sentry integration (its matcher never loads, the
// hold is long), then the visitor leaves: the held event must go out with
// the page. Sentry sends to the test's own server (same origin), which
// pages.test.mjs reads; `window.__held` says the error was captured.
import * as Sentry from '@sentry/browser';
import { noiseFilterIntegration } from 'noise-filter/matcher/init';

Sentry.init({
  dsn: `${location.protocol}//public@${location.host}/1`,
  defaultIntegrations: false,
  integrations: [noiseFilterIntegration({ matcher: new Promise(() => {}), hold: 60_000 })],
});
Sentry.captureException(new Error('checkout failed as the visitor left'));
window.__held = true;
