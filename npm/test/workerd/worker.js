// A Cloudflare Worker that runs the shared cases inside workerd, with the
// package resolved through its `workerd` condition (see workerd.test.mjs).
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
import * as nfMatcher from 'noise-filter/matcher';
import fixtures from '../../pkg/requests.json';
import oracle from '../../pkg/oracle.json';
import { cases, entryCases, matcherCases } from '../common/cases.mjs';

const nf = { Matcher, MemoryStore, addCustomPatterns, createBeforeSend, createHandler, createKey, listCustomPatterns, parseStack, removeCustomPattern, revokeKey, toEvent };

export default {
  async fetch() {
    const results = [];
    const all = [
      ...cases({ nf, fixtures, oracle }),
      // The matcher's cases again on `noise-filter/matcher` (its own wasm).
      ...matcherCases({ nf: nfMatcher, fixtures, oracle }).map((c) => ({ ...c, name: `noise-filter/matcher: ${c.name}` })),
      ...entryCases({ main: nf, matcher: nfMatcher }),
    ];
    for (const { name, fn } of all) {
      try {
        await fn();
        results.push({ name, ok: true });
      } catch (error) {
        results.push({ name, ok: false, error: String(error?.stack ?? error) });
      }
    }
    return Response.json(results);
  },
};
