// The shared cases (`npm/test/common/cases.mjs`) under node:test. The same file runs
// in Node (`node --test`), Bun (`bun test`) and Deno (`deno test`), each
// importing the installed package by name, so each runtime resolves its own
// condition of the package's `exports` map.
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import * as nf from 'noise-filter';
import * as nfMatcher from 'noise-filter/matcher';
import { cases, entryCases, matcherCases } from '../common/cases.mjs';

const read = (path) => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));
// Both written by `cargo xtask npm test`: the shared fixtures (copied from
// core/tests/parity/) and the core's native answers to them.
const fixtures = read('../../pkg/requests.json');
const oracle = read('../../pkg/oracle.json');

for (const { name, fn } of cases({ nf, fixtures, oracle })) test(name, fn);
// The matcher's cases again on `noise-filter/matcher` (its own wasm).
for (const { name, fn } of matcherCases({ nf: nfMatcher, fixtures, oracle })) test(`noise-filter/matcher: ${name}`, fn);
for (const { name, fn } of entryCases({ main: nf, matcher: nfMatcher })) test(name, fn);

test('this runtime loads its own entry of the exports map', () => {
  const runtime = globalThis.Deno !== undefined ? 'deno.js' : 'node.js';
  for (const [specifier, expected] of [['noise-filter', runtime], ['noise-filter/matcher', `matcher-${runtime}`]]) {
    const entry = import.meta.resolve(specifier);
    if (!entry.endsWith(`/dist/${expected}`)) throw new Error(`resolved ${entry}, expected dist/${expected}`);
  }
});
