// The page of `noise-filter/matcher` alone, as a site that classifies its own
// errors ships it: Vite builds it from the installed package (`browser`
// condition), so only the matcher-only wasm is emitted and fetched. Runs the
// matcher's shared cases (bodies from the oracle: no handler here) and leaves
// the outcome in `window.__results` for browser.test.mjs.
import { Matcher, createBeforeSend, parseStack, toEvent } from 'noise-filter/matcher';
import fixtures from '../../pkg/requests.json';
import oracle from '../../pkg/oracle.json';
import { matcherCases } from '../common/cases.mjs';

const nf = { Matcher, createBeforeSend, parseStack, toEvent };

const results = [];
for (const { name, fn } of matcherCases({ nf, fixtures, oracle })) {
  try {
    await fn();
    results.push({ name, ok: true });
  } catch (error) {
    results.push({ name, ok: false, error: String(error?.stack ?? error) });
  }
}
document.getElementById('out').textContent = results.map((r) => `${r.ok ? 'ok' : 'FAIL'} ${r.name}`).join('\n');
window.__results = results;
