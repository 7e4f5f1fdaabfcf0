// The README's pages, as written (readme/extract.mjs takes them from the
// README), built by Vite and run in headless Chromium against a server that
// plays the site: it serves the built pages, and its `/noise-filter/` is the
// proxy the README describes (it adds the key; behind it, the package's
// createHandler). Sentry's requests are intercepted at the network: what
// reaches them is what the SDK sent.
//
// At page load, a script of the test (as an extension's content script)
// throws three errors just after the page's own script has run: a wallet
// extension's (`Cannot redefine property: ethereum`, built-in noise), one of
// the account's own noise (a custom pattern), and a real one. What must
// come out: the real one only, when the matcher is there; all three,
// unfiltered, when the wasm cannot load; none but the real one either
// under a Content-Security-Policy that allows the wasm.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { copyFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { chromium } from 'playwright-core';
import { DEFAULT_HOLD_MS, MemoryStore, addCustomPatterns, createHandler, createKey } from 'noise-filter';
import { SNIPPETS, writeSnippets } from '../readme/extract.mjs';
import { nodeListener } from '../common/node-http.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const snippetsDir = fileURLToPath(SNIPPETS);
const outDir = fileURLToPath(new URL('../../pkg/pages', import.meta.url));

const WALLET = 'Cannot redefine property: ethereum';
const OWN = 'acme widget exploded';
const REAL = 'invoice total is negative';
/** A visitor's desktop Chrome. */
const VISITOR = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36';
/** The README's figure: a 1.6 Mbps link, 150 ms of latency (Chrome's "Fast 3G" is close). */
const THROTTLED = { offline: false, latency: 150, downloadThroughput: 200_000, uploadThroughput: 94_000 };

// The account: a key, and one pattern of its own that only its list holds.
const store = new MemoryStore();
const key = await createKey(store, { account: 'acme', label: 'pages' });
await addCustomPatterns(store, 'acme', [{ pattern: OWN, category: 'third-party-script' }]);
const service = nodeListener(createHandler({ keys: store, customPatterns: store }));

// The site: built pages, the proxy, and what a test asks of them.
const site = { csp: undefined, blockWasm: false, proxied: [], envelopes: [] };
const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
const server = createServer(async (req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  if (path === '/v1/filters') return service(req, res); // the service itself, for the build-time curl
  if (path === '/api/1/envelope/') {
    // Sentry, for the page that sends to its own origin (pagehide.js).
    let body = '';
    for await (const chunk of req) body += chunk;
    site.envelopes.push(body);
    return res.writeHead(200, { 'access-control-allow-origin': '*' }).end('{}');
  }
  if (path.startsWith('/noise-filter/')) {
    // The proxy: the page sends no key, the proxy adds it.
    site.proxied.push({ path, authorization: req.headers.authorization });
    req.url = req.url.slice('/noise-filter'.length);
    req.rawHeaders.push('Authorization', `Bearer ${key}`);
    return service(req, res);
  }
  if (path.endsWith('.wasm') && site.blockWasm) return res.writeHead(404).end();
  let body;
  try {
    body = await readFile(join(outDir, path));
  } catch {
    return res.writeHead(404).end();
  }
  const headers = { 'content-type': types[extname(path)] ?? 'application/octet-stream' };
  if (path.endsWith('.html') && site.csp !== undefined) headers['content-security-policy'] = site.csp;
  res.writeHead(200, headers).end(body);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

// The README's snippets; `fetch-filters.sh` run as written (curl, the
// account's key) writes the list `bundled.page.ts` imports.
writeSnippets();
const work = await mkdtemp(join(tmpdir(), 'noise-filter-build-'));
await promisify(execFile)('sh', [join(snippetsDir, 'fetch-filters.sh')], {
  cwd: work,
  env: { ...process.env, NOISE_FILTER_URL: origin, NOISE_FILTER_KEY: key },
}).catch(async (error) => {
  throw new Error(`fetch-filters.sh: ${error.stderr || error.message}`);
});
// A page imports it from beside itself: the README's `src/` is the page's folder.
await copyFile(join(work, 'src', 'filters.json'), join(snippetsDir, 'filters.json'));
await rm(work, { recursive: true, force: true });

// Each page snippet in a page of its own, and the top-level-await page.
const pages = (await readdir(snippetsDir)).filter((f) => f.endsWith('.page.ts'));
const input = { tla: join(root, 'browser', 'tla.html'), pagehide: join(root, 'browser', 'pagehide.html') };
for (const page of pages) {
  const name = page.slice(0, -'.page.ts'.length);
  const html = join(snippetsDir, `${name}.html`);
  await writeFile(html, `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${name}</title></head>\n<body><script type="module" src="./${page}"></script></body></html>\n`);
  input[name] = html;
}
await build({
  root,
  logLevel: 'warn',
  build: { outDir, emptyOutDir: true, chunkSizeWarningLimit: 4096, rollupOptions: { input } },
});

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

/**
 * Opens `page` (`readme/snippets/<name>.html` or `browser/tla.html`) in a
 * fresh context with `userAgent`, optionally throttled, the test's errors
 * thrown at DOMContentLoaded; returns what Sentry was sent, the page's
 * errors and console, once `done(state)` holds (then a second more, for
 * anything that would still come).
 */
async function visit(path, { userAgent, throttle, throwErrors = true, done }) {
  const context = await browser.newContext(userAgent === undefined ? {} : { userAgent });
  const page = await context.newPage();
  const state = { events: [], errors: [], console: [], wasm: [], filters: 0 };
  page.on('pageerror', (error) => {
    state.thrownAt ??= Date.now();
    state.errors.push(error.message);
  });
  page.on('console', (message) => state.console.push(message.text()));
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (url.pathname.endsWith('.wasm')) state.wasm.push(response.status());
    if (url.pathname === '/noise-filter/v1/filters') state.filters += 1;
  });
  await page.route('https://o0.ingest.sentry.io/**', async (route) => {
    const lines = (route.request().postData() ?? '').split('\n');
    for (let i = 1; i + 1 < lines.length; i += 2) {
      if (JSON.parse(lines[i]).type === 'event') state.events.push(JSON.parse(lines[i + 1]));
    }
    await route.fulfill({ status: 200, contentType: 'application/json', body: '{}' });
  });
  if (throwErrors) {
    // As an extension's content script would, once the page's own script has run.
    await page.addInitScript(([wallet, own, real]) => {
      document.addEventListener('DOMContentLoaded', () => {
        for (const message of [wallet, own, real]) {
          setTimeout(() => {
            throw (message === wallet ? new TypeError(message) : new Error(message));
          });
        }
      });
    }, [WALLET, OWN, REAL]);
  }
  if (throttle) {
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', throttle);
  }
  const started = Date.now();
  await page.goto(`${origin}/${path}`);
  state.userAgent = await page.evaluate(() => navigator.userAgent);
  const deadline = started + 60_000;
  for (;;) {
    state.tla = await page.evaluate(() => window.__tla);
    if (done(state)) break;
    if (Date.now() > deadline) throw new Error(`${path}: not done in 60 s: ${JSON.stringify({ ...state, events: sent(state) })}`);
    await page.waitForTimeout(100);
  }
  await page.waitForTimeout(1000);
  state.took = Date.now() - started;
  await context.close();
  return state;
}

const sent = (state) => state.events.map((e) => e.exception?.values?.at(-1)?.value ?? e.message);
const sentOne = (state) => sent(state).includes(REAL);
const sentAll = (state) => sent(state).length >= 3;

test('sentry.page.ts, a visitor on a 1.6 Mbps link: errors thrown at page load wait for the matcher; noise dropped, the real one sent', async () => {
  site.proxied.length = 0;
  const state = await visit('readme/snippets/sentry.html', { userAgent: VISITOR, throttle: THROTTLED, done: sentOne });
  assert.deepEqual(sent(state), [REAL], 'the wallet error and the account-pattern error were dropped');
  assert.deepEqual(state.errors.sort(), [OWN, REAL, WALLET].sort(), 'no page error but the three thrown');
  assert.deepEqual(state.wasm, [200]);
  // The page asked the site's proxy, without a key; the proxy added it.
  assert.deepEqual(site.proxied, [{ path: '/noise-filter/v1/filters', authorization: undefined }]);
  assert.match(state.events[0].request.headers['User-Agent'], /Chrome\/156/);
});

test('sentry.page.ts in Playwright\'s headless Chromium: HeadlessChrome is bot traffic, so even the real error is dropped', async () => {
  // Nothing is to come: wait out the whole hold, after which every held event is decided.
  const state = await visit('readme/snippets/sentry.html', { done: (s) => s.errors.length === 3 && Date.now() - s.thrownAt > DEFAULT_HOLD_MS });
  assert.match(state.userAgent, /HeadlessChrome/);
  assert.deepEqual(state.wasm, [200]);
  assert.deepEqual(sent(state), []);
});

test('e2e.page.ts: the README\'s one line for test runs keeps HeadlessChrome\'s real errors, still drops the noise', async () => {
  const state = await visit('readme/snippets/e2e.html', { done: sentOne });
  assert.match(state.userAgent, /HeadlessChrome/);
  assert.deepEqual(sent(state), [REAL]);
});

test('bundled.page.ts with the list fetch-filters.sh wrote at build time: no request for it, the account pattern applies', async () => {
  site.proxied.length = 0;
  const state = await visit('readme/snippets/bundled.html', { userAgent: VISITOR, done: sentOne });
  assert.deepEqual(sent(state), [REAL]);
  assert.deepEqual(site.proxied, [], 'nothing fetched at run time');
});

test("under script-src 'self' 'wasm-unsafe-eval' the page filters", async () => {
  site.csp = "script-src 'self' 'wasm-unsafe-eval'";
  try {
    const state = await visit('readme/snippets/sentry.html', { userAgent: VISITOR, done: sentOne });
    assert.deepEqual(sent(state), [REAL]);
  } finally {
    site.csp = undefined;
  }
});

test("under script-src 'self' (no 'wasm-unsafe-eval') the app runs, every event is sent unfiltered, onError hears why", async () => {
  site.csp = "script-src 'self'";
  try {
    const state = await visit('readme/snippets/sentry.html', { userAgent: VISITOR, done: sentAll });
    assert.deepEqual(sent(state).sort(), [OWN, REAL, WALLET].sort());
    assert.ok(state.console.some((line) => /CompileError.*WebAssembly|WebAssembly.*(Content Security Policy|unsafe-eval)/i.test(line)), state.console.join('\n'));
    assert.deepEqual(state.errors.sort(), [OWN, REAL, WALLET].sort(), 'no page error but the three thrown');
  } finally {
    site.csp = undefined;
  }
});

test('a wasm that answers 404 (a CDN, an ad blocker): every event sent unfiltered, onError hears the status', async () => {
  site.blockWasm = true;
  try {
    const state = await visit('readme/snippets/sentry.html', { userAgent: VISITOR, done: sentAll });
    assert.deepEqual(sent(state).sort(), [OWN, REAL, WALLET].sort());
    assert.ok(state.console.some((line) => /noise-filter: \S+\.wasm answered 404/.test(line)), state.console.join('\n'));
  } finally {
    site.blockWasm = false;
  }
});

test("noise-filter/matcher's top-level await: refused by the CSP, the importing module still runs", async () => {
  site.csp = "script-src 'self'";
  let refused;
  try {
    refused = await visit('browser/tla.html', { throwErrors: false, done: (s) => s.tla !== undefined });
  } finally {
    site.csp = undefined;
  }
  // Read after the page had its second: the module ran past its import.
  assert.equal(refused.tla?.started, true, JSON.stringify(refused));
  assert.match(refused.tla.init, /^CompileError: /);
  assert.match(refused.tla.builtin, /^noise-filter: the wasm did not load: /);
  const allowed = await visit('browser/tla.html', { throwErrors: false, done: (s) => s.tla !== undefined });
  assert.deepEqual(allowed.tla, { started: true, init: 'loaded', noise: true });
});
test('an event held while the matcher loads goes out when the visitor leaves the page (pagehide), not lost', async () => {
  const context = await browser.newContext({ userAgent: VISITOR });
  const page = await context.newPage();
  await page.goto(`${origin}/browser/pagehide.html`);
  await page.waitForFunction(() => window.__held === true);
  await page.waitForTimeout(500);
  assert.equal(site.envelopes.length, 0, 'held: the matcher never loads, the hold is a minute');
  await page.goto('about:blank');
  const deadline = Date.now() + 10_000;
  while (!site.envelopes.some((e) => e.includes('checkout failed as the visitor left')) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await context.close();
  assert.ok(site.envelopes.some((e) => e.includes('checkout failed as the visitor left')), `sent: ${site.envelopes.length} envelopes`);
});

after(async () => {
  await browser.close();
  server.close();
});
