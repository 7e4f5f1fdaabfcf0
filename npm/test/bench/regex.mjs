// The built-in catalog's regexes as clients run them, `new RegExp(p, "i")`
// in V8 (Node), on long hostile texts: a 16 KB user agent and a 112 KB
// message of each shape that made a catalog regex super-linear before the
// regex rule (docs/CONTRACT.md, "Matching"), and of the shapes its runs
// read. Every time is a ratio to the cost of one substring pattern on the
// same text in the same process (`text.toLowerCase().includes(p)`, as the
// contract applies one), so runs on machines of different speed compare.
//
// Then, at growing sizes, to show how their time grows: the three catalog
// regexes as they were before the rule, and shapes the rule refuses.
//
// Run by `cargo xtask npm bench` after the matcher benchmark, or alone from
// npm/test once the package is installed there: `node bench/regex.mjs`.
// Prints tables and writes ../../pkg/bench-regex.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Matcher } from 'noise-filter';

const pkg = new URL('../../pkg/', import.meta.url);

const catalog = Matcher.builtin({ minConfidence: 0 })
  .patterns.filter((p) => p.type === 'regex')
  .map((p) => ({ id: p.id, regex: new RegExp(p.pattern, 'i') }));

// The catalog's texts of these ids before the rule (as they were before
// commit 084b4f2).
const previous = [
  ['ua-compatible-bot-token', String.raw`\(compatible;[^)]*?[\w.-]*(bot|crawler|spider|scraper)\b`],
  ['ua-compatible-comment-with-url', String.raw`\(compatible;[^)]*(https?:\/\/|www\.|@[\w-]+\.)`],
  ['event-captured-as-exception', 'Event `(CustomEvent|Event|ErrorEvent|ProgressEvent)` .*captured as exception'],
].map(([id, pattern]) => ({ id, regex: new RegExp(pattern, 'i') }));

/** `unit` repeated after `head` to `size` characters. */
const fill = (head, unit, size) => (head + unit.repeat(Math.ceil(size / unit.length))).slice(0, size);
const UA = 16 * 1024;
const MESSAGE = 112 * 1024;
const chrome = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 ';
const texts = {
  'UA: a browser user agent, repeated': fill('', chrome, UA),
  'UA: (compatible; repeated': fill('Mozilla/5.0 ', '(compatible; ', UA),
  'UA: (compatible; then a long token': fill('ider(compatible;'.repeat(500) + 'ider(', 'craper-', UA),
  'UA: bot product tokens': fill('Mozilla/5.0 ', '(xbot.-x; ', UA),
  'message: Event `Event` repeated': fill('', 'Event `Event` ', MESSAGE),
  'message: one letter': 'a'.repeat(MESSAGE),
  'message: digits': '7'.repeat(MESSAGE),
  'message: words': fill('', 'lorem ipsum dolor ', MESSAGE),
  'message: a stack trace': fill('TypeError: x is undefined\n', '    at render (https://app.example/static/js/main.4f1c.js:1:2345)\n', MESSAGE),
  'message: wallet wordings': fill('', 'Cannot set property ethereu ', MESSAGE),
  'message: CefSharp wording': fill('', 'Object Not Found Matching Id:1, MethodName:', MESSAGE),
};

/** Mean time of `fn` in ms: once to warm up, then at least 20 ms of runs. */
function time(fn) {
  fn();
  let runs = 0;
  const start = performance.now();
  let now = start;
  do {
    fn();
    runs++;
    now = performance.now();
  } while (now - start < 20);
  return (now - start) / runs;
}

const round = (x) => (x < 10 ? Math.round(x * 100) / 100 : Math.round(x));
/** The cost of one substring pattern on `text`: the unit of every ratio. */
const substring = (text) => time(() => text.toLowerCase().includes('noise-filter: not in the text'));

const results = { node: process.versions.node, catalog: catalog.length, texts: {}, growth: {} };
const rows = [];
for (const [name, text] of Object.entries(texts)) {
  const unit = substring(text);
  const each = catalog
    .map(({ id, regex }) => ({ id, ratio: time(() => regex.test(text)) / unit }))
    .sort((a, b) => b.ratio - a.ratio);
  const total = each.reduce((sum, r) => sum + r.ratio, 0);
  results.texts[name] = { length: text.length, substringMicroseconds: unit * 1000, catalog: each };
  rows.push({
    text: name,
    KB: Math.round(text.length / 1024),
    'substring (µs)': round(unit * 1000),
    'whole catalog / substring': round(total),
    'slowest regex / substring': `${round(each[0].ratio)} (${each[0].id})`,
  });
}
console.log(`${catalog.length} regexes of the built-in catalog, new RegExp(p, "i"), Node ${process.versions.node}:`);
console.table(rows);

// By size: each step doubles the text (adds two characters, for the
// exponential shapes). The ratio of a linear regex stays put (growth ×1);
// quadratic doubles it, cubic quadruples it.
const growing = [
  ...previous.map(({ id, regex }) => [`${id} (previous)`, regex]),
  ...[String.raw`(a+)+$`, String.raw`(x+x+)+y`, String.raw`(\w+\s?)*$`, String.raw`a.*b`, String.raw`Loading chunk .* failed`, String.raw`;\w+\s?\w+;`].map(
    (p) => [`${p} (refused)`, new RegExp(p, 'i')],
  ),
];
const shapes = {
  'ua-compatible-bot-token (previous)': (n) => fill('ider(compatible;'.repeat(n / 32) + 'ider(', 'craper-', n),
  'ua-compatible-comment-with-url (previous)': (n) => fill('Mozilla/5.0 ', '(compatible; ', n),
  'event-captured-as-exception (previous)': (n) => fill('', 'Event `Event` ', n),
  '(a+)+$ (refused)': (n) => `${'a'.repeat(n)}!`,
  '(x+x+)+y (refused)': (n) => 'x'.repeat(n),
  '(\\w+\\s?)*$ (refused)': (n) => `${'a'.repeat(n)}!`,
  'a.*b (refused)': (n) => 'a'.repeat(n),
  'Loading chunk .* failed (refused)': (n) => fill('', 'Loading chunk ', n),
  ';\\w+\\s?\\w+; (refused)': (n) => `;${'a'.repeat(n)}`,
};
const sizes = {
  // Cubic: 16 KB would take minutes.
  'ua-compatible-bot-token (previous)': [512, 1024, 2048, 4096],
  'ua-compatible-comment-with-url (previous)': [2048, 4096, 8192, 16384],
  'event-captured-as-exception (previous)': [14336, 28672, 57344, 114688],
  '(a+)+$ (refused)': [17, 19, 21, 23],
  '(x+x+)+y (refused)': [17, 19, 21, 23],
  '(\\w+\\s?)*$ (refused)': [17, 19, 21, 23],
};
const growthRows = [];
for (const [name, regex] of growing) {
  const row = { regex: name };
  results.growth[name] = {};
  const ratios = [];
  for (const [i, n] of (sizes[name] ?? [7168, 14336, 28672, 57344]).entries()) {
    const text = shapes[name](n);
    const ratio = time(() => regex.test(text)) / substring(text);
    results.growth[name][text.length] = ratio;
    row[`size ${i + 1}`] = `${text.length}: ${round(ratio)}`;
    ratios.push(ratio);
  }
  // The geometric mean of the steps: less noisy than any one step.
  row['growth per step'] = `×${round((ratios.at(-1) / ratios[0]) ** (1 / (ratios.length - 1)))}`;
  growthRows.push(row);
}
console.log('Previous catalog regexes and refused shapes, by size (characters: time / substring):');
console.table(growthRows);

mkdirSync(pkg, { recursive: true });
writeFileSync(new URL('bench-regex.json', pkg), `${JSON.stringify(results, null, 1)}\n`);
