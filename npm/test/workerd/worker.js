// A Cloudflare Worker that runs the shared cases inside workerd, with the
// package resolved through its `workerd` condition (see workerd.test.mjs).
import * as nf from 'noise-filter';
import fixtures from '../fixtures/requests.json';
import oracle from '../../pkg/oracle.json';
import { cases } from '../shared/cases.mjs';

export default {
  async fetch() {
    const results = [];
    for (const { name, fn } of cases({ nf, fixtures, oracle })) {
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
