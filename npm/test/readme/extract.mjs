// The README snippets, taken from the README files themselves: every
// ```js, ```mjs and ```ts block (and any other block a marker names) follows
// a `<!-- snippet: NAME -->` line, and is written to `snippets/NAME`
// exactly as it stands, where the tests run it and `tsc` checks it:
//
// - `*.mjs`: run by Node (node/readme.test.mjs), checked with `checkJs`;
// - `*.ts`: checked by tsc 5.9, 6.0 and 7.0 (tsconfig.json, strict and
//   `exactOptionalPropertyTypes`), then run by Node, its types stripped;
// - `*.page.ts`: a page, checked as a bundler reads it (tsconfig.page.json)
//   and built by Vite into a page that headless Chromium runs
//   (browser/browser.test.mjs);
// - `*.sh`: run by the test that needs what it makes.
//
// A code block of JavaScript or TypeScript without a marker fails the
// extraction: a snippet no test runs would be a snippet nobody checked.
//
// `node readme/extract.mjs` writes them (`cargo xtask npm test` does, before
// any suite); importing this module gives `snippets()`.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The README files whose snippets are tests: the package's and the repository's. */
export const READMES = [new URL('../../README.md', import.meta.url), new URL('../../../README.md', import.meta.url)];
/** Where the snippets are written. */
export const SNIPPETS = new URL('./snippets/', import.meta.url);

const MARKER = /^<!-- snippet: (\S+) -->$/;
const FENCE = /^```(\w*)\s*$/;
const CODE = new Set(['js', 'mjs', 'ts']);

/** Every snippet of `readmes`: `{ name, lang, text, readme, line }`. */
export function snippets(readmes = READMES) {
  const found = [];
  for (const readme of readmes) {
    const lines = readFileSync(readme, 'utf8').split('\n');
    const where = (i) => `${fileURLToPath(readme)}:${i + 1}`;
    let named;
    for (let i = 0; i < lines.length; i++) {
      const marker = MARKER.exec(lines[i]);
      if (marker) {
        named = { name: marker[1], at: i };
        continue;
      }
      const fence = FENCE.exec(lines[i]);
      if (fence === null) {
        if (named !== undefined && lines[i].trim() !== '') throw new Error(`${where(named.at)}: the snippet marker is not followed by a code block`);
        continue;
      }
      const lang = fence[1];
      const end = lines.findIndex((line, j) => j > i && line === '```');
      if (end === -1) throw new Error(`${where(i)}: a code block that does not end`);
      if (named === undefined) {
        if (CODE.has(lang)) throw new Error(`${where(i)}: a ${lang} block without a <!-- snippet: NAME --> marker: every snippet is a test`);
      } else {
        if (found.some((s) => s.name === named.name)) throw new Error(`${where(named.at)}: a second snippet named ${named.name}`);
        found.push({ name: named.name, lang, text: lines.slice(i + 1, end).join('\n') + '\n', readme: fileURLToPath(readme), line: i + 2 });
      }
      named = undefined;
      i = end;
    }
  }
  return found;
}

/** Writes every snippet into `snippets/` (emptied first); returns them. */
export function writeSnippets(dir = SNIPPETS) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const all = snippets();
  for (const { name, text } of all) writeFileSync(new URL(name, dir), text);
  // What `fetch-filters.sh` writes and `bundled.page.ts` imports: until a
  // test runs the curl line itself, the body the native core answers.
  const oracle = new URL('../../pkg/oracle.json', import.meta.url);
  if (existsSync(oracle)) {
    const { requests } = JSON.parse(readFileSync(oracle, 'utf8'));
    const body = requests.find((r) => r.name === 'A: all patterns').body;
    writeFileSync(new URL('filters.json', dir), body);
  }
  return all;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const all = writeSnippets();
  console.log(`${all.length} README snippets in ${fileURLToPath(SNIPPETS)}: ${readdirSync(SNIPPETS).join(', ')}`);
}
