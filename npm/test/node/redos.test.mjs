// An independent check of the rule that keeps every published regex linear
// in a backtracking engine such as JavaScript's (core/src/syntax.rs, "Linear
// in every engine"; docs/CONTRACT.md, "Matching"): recheck, a ReDoS checker
// from the npm registry, reads every regex of the built-in catalog and a
// sample of regexes the core accepts as custom patterns, and must find each
// safe; and it reads shapes the core refuses, and must find each
// vulnerable, which checks the checker. The core's verdicts come through the
// installed package (`addCustomPatterns` validates as the admin tool does).
//
// recheck runs its native build (the `recheck-linux-x64` package) when it is
// installed, its pure JavaScript build otherwise: same verdicts, about four
// times slower.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { check } from 'recheck';
import { Matcher, MemoryStore, addCustomPatterns } from 'noise-filter';

/// Patterns such as teams write them: the core accepts each.
const ACCEPTED = [
  String.raw`^Script error\.?$`,
  String.raw`Loading chunk [\w-]+ failed`,
  String.raw`Loading chunk [^ ]* failed`,
  String.raw`^(ChunkLoadError: )?Loading chunk \d+ failed\.?`,
  String.raw`ResizeObserver loop (limit exceeded|completed with undelivered notifications)`,
  String.raw`^(chrome|moz|safari(-web)?)-extension:\/\/`,
  String.raw`graph\.facebook\.com|connect\.facebook\.net`,
  String.raw`\b(zaraz|fbq|gtag|_hsq) is not defined`,
  String.raw`Cannot read properties of (null|undefined) \(reading '[^']*'\)`,
  String.raw`Chrome\/\d+\.\d+\.\d+`,
  String.raw`Chrome\/\d+(\.\d+)+`,
  String.raw`^https?:\/\/([\w-]+\.)+example\.com\/`,
  String.raw`Version (\d+\.)+\d+ failed`,
  String.raw`(\d{1,3}\.){3}\d{1,3}`,
  String.raw`\b\w+bot\/\d`,
  String.raw`^w\d+$`,
  String.raw`\bwidget\b`,
  String.raw`^AcmeError: retry budget exhausted after \d+ tries$`,
  String.raw`^Loading (?:module|chunk) \d+ timed out$`,
  String.raw`\(compatible;[^()]*?(bot|crawler)\b`,
  String.raw`(Cannot redefine property|Cannot set property) .?(ethereum|web3|tronWeb|tronLink)\b`,
];

/// Shapes the core refuses as not linear, each one a backtracking engine
/// runs in exponential or polynomial time (the last three: the catalog's
/// regexes before they were rewritten).
const REFUSED = [
  String.raw`(a+)+$`,
  String.raw`(x+x+)+y`,
  String.raw`(\w+\s?)*$`,
  String.raw`x(a|aa)*y`,
  String.raw`a.*b`,
  String.raw`Loading chunk .* failed`,
  String.raw`\d+$`,
  String.raw`;\w+\s?\w+;`,
  String.raw`\(compatible;[^)]*?[\w.-]*(bot|crawler|spider|scraper)\b`,
  String.raw`\(compatible;[^)]*(https?:\/\/|www\.|@[\w-]+\.)`,
  'Event `(CustomEvent|Event|ErrorEvent|ProgressEvent)` .*captured as exception',
];

/// recheck's verdict on `pattern` as clients apply it (`new RegExp(p, "i")`).
/// Its automaton checker takes a few seconds on the longer catalog regexes.
const verdict = (pattern) => check(pattern, 'i', { timeout: 300_000 });

const addRegex = (pattern) => addCustomPatterns(new MemoryStore(), 'acme', [{ pattern, type: 'regex' }]);

test('every regex of the built-in catalog is linear by recheck', async () => {
  const regexes = Matcher.builtin({ minConfidence: 0 }).patterns.filter((p) => p.type === 'regex');
  assert.ok(regexes.length >= 60, String(regexes.length));
  const found = await Promise.all(regexes.map(async (p) => [p.id, await verdict(p.pattern)]));
  const unsafe = found.filter(([, d]) => d.status !== 'safe').map(([id, d]) => `${id}: ${d.status} ${d.complexity?.summary ?? d.error?.kind ?? ''}`);
  assert.deepEqual(unsafe, []);
});

test('custom regexes the core accepts are linear by recheck', async () => {
  for (const pattern of ACCEPTED) await addRegex(pattern);
  const found = await Promise.all(ACCEPTED.map(async (p) => [p, await verdict(p)]));
  const unsafe = found.filter(([, d]) => d.status !== 'safe').map(([p, d]) => `${p}: ${d.status} ${d.complexity?.summary ?? d.error?.kind ?? ''}`);
  assert.deepEqual(unsafe, []);
});

test('recheck finds vulnerable the shapes the core refuses', async () => {
  for (const pattern of REFUSED) {
    await assert.rejects(addRegex(pattern), /backtracking engine|retries at each position/, pattern);
  }
  const found = await Promise.all(REFUSED.map(async (p) => [p, await verdict(p)]));
  const missed = found.filter(([, d]) => d.status !== 'vulnerable').map(([p, d]) => `${p}: ${d.status}`);
  assert.deepEqual(missed, []);
});
