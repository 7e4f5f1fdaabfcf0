// Events classified per second: the package's matcher against what a user
// writes today, with the full built-in catalog (every confidence), on the
// catalog's labelled evaluation events: "real" application errors (clean) and
// "noise". Run by `cargo xtask npm bench` (which writes ../../pkg/oracle.json,
// the source of the events); prints a table and writes ../../pkg/bench.json.
//
// - naive loop: every pattern over every text, `new RegExp(p, "i").test` for
//   regexes (compiled once) and `toLowerCase().includes` for strings;
// - combined RegExp: one alternation of every pattern (isbot's approach);
//   answers only "noise or not", as isNoise does.
//
// Both entries are measured: `noise-filter` and `noise-filter/matcher` (the
// matcher-only wasm), rows "noise-filter …" and "noise-filter/matcher …".
import { readFileSync, writeFileSync } from 'node:fs';
import { Matcher } from 'noise-filter';
import { Matcher as EntryMatcher } from 'noise-filter/matcher';

const pkg = new URL('../../pkg/', import.meta.url);
const oracle = JSON.parse(readFileSync(new URL('oracle.json', pkg), 'utf8'));
const seconds = Number(process.env.BENCH_SECONDS ?? 1);

const events = (label) =>
  oracle.events
    .filter((e) => e.label === label)
    .map(({ event }) => ({
      ...(event.type != null && { type: event.type }),
      ...(event.message != null && { message: event.message }),
      ...(event.frames.length > 0 && { frames: event.frames }),
      ...(event.userAgent != null && { userAgent: event.userAgent }),
    }));
const sets = { clean: events('real'), noisy: events('noise') };

const matcher = Matcher.builtin({ minConfidence: 0 });
const entryMatcher = EntryMatcher.builtin({ minConfidence: 0 });
const patterns = matcher.patterns;

// What users write today.
function compileNaive(list) {
  return list.map((p) =>
    p.type === 'regex' ? { regex: new RegExp(p.pattern, 'i') } : { lower: p.pattern.toLowerCase() },
  );
}
function texts(event) {
  const out = [];
  if (event.message !== undefined || event.type !== undefined) {
    out.push(event.type && event.message !== undefined ? `${event.type}: ${event.message}` : (event.message ?? event.type));
  }
  if (event.frames) out.push(...event.frames);
  if (event.userAgent !== undefined) out.push(event.userAgent);
  return out;
}
function naiveMatches(compiled, event) {
  const found = [];
  for (const text of texts(event)) {
    const lower = text.toLowerCase();
    for (let i = 0; i < compiled.length; i++) {
      const p = compiled[i];
      if (p.regex ? p.regex.test(text) : lower.includes(p.lower)) found.push(i);
    }
  }
  return found;
}
function naiveIsNoise(compiled, event) {
  for (const text of texts(event)) {
    const lower = text.toLowerCase();
    for (const p of compiled) if (p.regex ? p.regex.test(text) : lower.includes(p.lower)) return true;
  }
  return false;
}
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
function compileCombined(list) {
  return new RegExp(list.map((p) => `(?:${p.type === 'regex' ? p.pattern : escape(p.pattern)})`).join('|'), 'i');
}
function combinedIsNoise(regex, event) {
  for (const text of texts(event)) if (regex.test(text)) return true;
  return false;
}

function rate(events, fn) {
  for (let i = 0; i < 3; i++) for (const e of events) fn(e); // warm up
  let n = 0;
  const start = performance.now();
  const until = start + seconds * 1000;
  let now = start;
  while (now < until) {
    for (const e of events) fn(e);
    n += events.length;
    now = performance.now();
  }
  return n / ((now - start) / 1000);
}
function cost(fn, runs = 20) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(runs / 2)];
}

const naive = compileNaive(patterns);
const combined = compileCombined(patterns);

// The three must agree on what is noise (differences would be listed).
const disagreements = [];
for (const [name, list] of Object.entries(sets)) {
  for (const e of list) {
    const ours = matcher.isNoise(e);
    if (ours !== naiveIsNoise(naive, e) || ours !== combinedIsNoise(combined, e) || ours !== entryMatcher.isNoise(e)) {
      disagreements.push({ set: name, event: e });
    }
  }
}

const results = { catalog: patterns.length, regexes: patterns.filter((p) => p.type === 'regex').length, events: {}, build: {}, disagreements };
for (const [name, list] of Object.entries(sets)) {
  results.events[name] = {
    count: list.length,
    caught: list.filter((e) => matcher.isNoise(e)).length,
    'noise-filter isNoise': rate(list, (e) => matcher.isNoise(e)),
    'noise-filter classify': rate(list, (e) => matcher.classify(e)),
    'noise-filter/matcher isNoise': rate(list, (e) => entryMatcher.isNoise(e)),
    'noise-filter/matcher classify': rate(list, (e) => entryMatcher.classify(e)),
    'naive loop, all matches': rate(list, (e) => naiveMatches(naive, e)),
    'naive loop, first match': rate(list, (e) => naiveIsNoise(naive, e)),
    'combined RegExp': rate(list, (e) => combinedIsNoise(combined, e)),
  };
}
const body = JSON.stringify({ patterns });
results.build = {
  'Matcher.builtin (ms)': cost(() => Matcher.builtin({ minConfidence: 0 }).free()),
  'Matcher.fromResponse, same patterns (ms)': cost(() => Matcher.fromResponse(body).free()),
  'noise-filter/matcher: Matcher.builtin (ms)': cost(() => EntryMatcher.builtin({ minConfidence: 0 }).free()),
  'noise-filter/matcher: Matcher.fromResponse (ms)': cost(() => EntryMatcher.fromResponse(body).free()),
  'naive: compile RegExps (ms)': cost(() => compileNaive(patterns)),
  'combined RegExp: compile and first test (ms)': cost(() => compileCombined(patterns).test('x')),
};

const fmt = (n) => (n >= 1000 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));
console.log(`catalog: ${results.catalog} patterns (${results.regexes} regexes); ${seconds}s per figure; Node ${process.version}`);
for (const [name, r] of Object.entries(results.events)) {
  console.log(`\n${name} events (${r.count}, ${r.caught} caught): events/s`);
  for (const [k, v] of Object.entries(r)) if (typeof v === 'number' && k !== 'count' && k !== 'caught') console.log(`  ${k.padEnd(30)} ${fmt(v).padStart(12)}`);
  for (const entry of ['noise-filter', 'noise-filter/matcher']) {
    const ours = r[`${entry} isNoise`];
    console.log(
      `  ${entry}: isNoise vs naive first match: ${(ours / r['naive loop, first match']).toFixed(1)}x, ` +
        `vs combined RegExp: ${(ours / r['combined RegExp']).toFixed(1)}x; ` +
        `classify vs naive all matches: ${(r[`${entry} classify`] / r['naive loop, all matches']).toFixed(1)}x`,
    );
  }
}
console.log('\nbuild cost (median):');
for (const [k, v] of Object.entries(results.build)) console.log(`  ${k.padEnd(48)} ${v.toFixed(2)}`);
console.log(`\nisNoise disagreements (entries, naive loop, combined RegExp): ${disagreements.length}`);
for (const d of disagreements.slice(0, 5)) console.log(`  ${d.set}: ${JSON.stringify(d.event).slice(0, 160)}`);
writeFileSync(new URL('bench.json', pkg), `${JSON.stringify(results, null, 1)}\n`);
