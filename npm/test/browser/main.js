// The page Vite builds from the installed package (the `browser` condition
// of its exports map): runs the shared cases and leaves the outcome in
// `window.__results` for browser.test.mjs.
// Named imports, as users write them: with them a bundler reaches api.js
// through the entry's re-export, and keeps the entry (which loads the
// wasm) only because package.json lists it under `sideEffects`.
import {
  Matcher,
  MemoryStore,
  addCustomPatterns,
  createBeforeSend,
  createHandler,
  createKey,
  listCustomPatterns,
  parseStack,
  removeCustomPattern,
  revokeKey,
  toEvent,
} from 'noise-filter';
import fixtures from '../../pkg/requests.json';
import oracle from '../../pkg/oracle.json';
import { cases } from '../common/cases.mjs';

const nf = { Matcher, MemoryStore, addCustomPatterns, createBeforeSend, createHandler, createKey, listCustomPatterns, parseStack, removeCustomPattern, revokeKey, toEvent };

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
