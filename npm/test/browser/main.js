// The page Vite builds from the installed package (the `browser` condition
// of its exports map): runs the shared cases and leaves the outcome in
// `window.__results` for browser.test.mjs.
import * as nf from 'noise-filter';
import fixtures from '../fixtures/requests.json';
import oracle from '../../pkg/oracle.json';
import { cases } from '../shared/cases.mjs';

const results = [];
for (const { name, fn } of cases({ nf, fixtures, oracle })) {
  try {
    await fn();
    results.push({ name, ok: true });
  } catch (error) {
    results.push({ name, ok: false, error: String(error?.stack ?? error) });
  }
}
document.getElementById('out').textContent = results.map((r) => `${r.ok ? 'ok' : 'FAIL'} ${r.name}`).join('\n');
window.__results = results;
