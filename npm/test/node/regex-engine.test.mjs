// The matcher-only wasm runs its regexes in the JavaScript engine's RegExp
// (the core writes each one, case folding included, for that engine); the
// main entry's wasm runs them with Rust's `regex`. Same verdicts: the whole
// catalog over crawler and browser user agents, the catalog's own texts and
// every one of them made hostile (Unicode case-fold look-alikes, line
// separators, astral characters), and regexes of the whole subset over
// texts where ECMAScript's own `i` flag and Rust disagree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Matcher as RustMatcher } from 'noise-filter';
import { Matcher as EngineMatcher } from 'noise-filter/matcher';

const require = createRequire(import.meta.url);
const crawlers = require('crawler-user-agents');
const topUserAgents = require('top-user-agents');

/** Each text as it is, and as the case folds of the two engines would confuse it. */
function hostile(text) {
  return [
    text,
    text.toUpperCase(),
    text.toLowerCase(),
    text.replace(/s/g, '\u017f'), // ſ: folds to s in Rust, not with ECMAScript's /i
    text.replace(/k/gi, '\u212a'), // Kelvin sign
    text.replace(/i/g, '\u0130'), // İ
    text.replace(/ /g, '\u2028'), // a line separator, which `.` does not match
    text.replace(/ /g, '\u00a0'), // a space `\s` matches and `\w` does not
    `\u{1F600}${text}\u{1D400}`, // astral characters around it
    text.replace(/e/g, '\u00e9'),
  ];
}

/** The verdict's matches, comparable across the two wasms. */
const shape = (verdict) => ({ noise: verdict.noise, matches: verdict.matches.map((m) => `${m.id}@${m.field}`) });

function compare(rust, engine, texts, what) {
  let noisy = 0;
  for (const text of texts) {
    for (const event of [{ message: text }, { userAgent: text }, { frames: [text] }]) {
      const expected = shape(rust.classify(event));
      assert.deepEqual(shape(engine.classify(event)), expected, `${what}: ${JSON.stringify(event)}`);
      assert.equal(engine.isNoise(event), expected.noise, `${what} (isNoise): ${JSON.stringify(event)}`);
      if (expected.noise) noisy += 1;
    }
  }
  return noisy;
}

test('the whole catalog: the JavaScript engine path gives the Rust path\'s verdicts on user agents and on the catalog\'s own texts made hostile', () => {
  const rust = RustMatcher.builtin({ minConfidence: 0 });
  const engine = EngineMatcher.builtin({ minConfidence: 0 });
  const regexes = rust.patterns.filter((p) => p.type === 'regex');
  assert.ok(regexes.length >= 50, `${regexes.length} regexes in the catalog`);
  const agents = [...new Set([...crawlers.flatMap((c) => c.instances ?? []), ...topUserAgents])];
  const ownTexts = rust.patterns.map((p) => p.pattern);
  const texts = [...agents.flatMap(hostile), ...ownTexts.flatMap(hostile)];
  const noisy = compare(rust, engine, texts, 'catalog');
  // Not vacuous: regexes and substrings both match many of these.
  assert.ok(noisy > 10_000, `${noisy} noisy events`);
  const regexHits = agents.filter((ua) => rust.classify({ userAgent: ua }).matches.some((m) => regexes.some((r) => r.id === m.id)));
  assert.ok(regexHits.length > 500, `${regexHits.length} user agents matched by a regex`);
});

test('regexes of the whole subset: the same verdicts where ECMAScript\'s own case folding and Rust\'s differ', () => {
  const regexes = [
    String.raw`\bscript error\b`,
    String.raw`kelvin\s\d+`,
    String.raw`^st[a-z]+ed$`,
    String.raw`a.b.c`,
    String.raw`x\sy\Sz`,
    String.raw`\w+@example`,
    String.raw`[^a-z]foo\d{2,3}`,
    String.raw`σ+ma`,
    String.raw`ǆemal`,
    String.raw`caf[eé]\B`,
    String.raw`(?:chunk|module) \d+ failed`,
    String.raw`\u00e9t[\u00e0-\u00ff]\x41`,
    String.raw`\bmi[sk]+\b`,
  ];
  const patterns = regexes.map((pattern, i) => ({ id: `r${i}`, pattern, type: 'regex', category: 'custom' }));
  const rust = RustMatcher.fromPatterns(patterns);
  const engine = EngineMatcher.fromPatterns(patterns);
  const texts = [
    'Script error.', '\u017fcript error', 'script errorſ', '\u212aelvin 12', 'KELVIN\u00a07', 'kelvin\u20287',
    'started', '\u017ft\u212aed', 'STARTED\n', 'a\nb c', 'a\u2028b-c', 'a\u{1F600}b\u{1F600}c', 'x y z', 'x\u3000yéz',
    'user@example', '\u017f@example', '\u00e9@example', '_@example', '1foo12', 'Foo123', '-foo99', 'ΣΣMA', 'ςma', 'σΜΑ',
    'ǅemal', 'Ǆemal', 'café', 'CAFÉS', 'cafe_', 'Loading chunk 12 failed', 'MODULE 7 FAILED', 'été\u00c0A', 'ÉTÉÿa',
    'mis', 'MI\u017f\u017f', 'mi\u212a', 'xmisx', ' misk ',
  ];
  const noisy = compare(rust, engine, texts.flatMap(hostile), 'subset');
  assert.ok(noisy > 50, `${noisy} noisy events`);
});
