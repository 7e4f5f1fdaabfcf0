// How long a page's errors wait for the matcher, by network: the README's
// page loading (`noise-filter/matcher/init`, a client through the site's
// proxy) in headless Chromium, the network throttled by Chrome's own
// emulation (CDP `Network.emulateNetworkConditions`), a fresh cache each
// run. The Sentry integration's default hold (DEFAULT_HOLD_MS) rests on
// these figures (docs/BENCHMARKS.md, "npm: the page-load hold"). Run:
// `node bench/page-load.mjs` in npm/test after `cargo xtask npm test` (or
// with the package installed there); RUNS=5 by default.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';
import { chromium } from 'playwright-core';
import { MemoryStore, createHandler, createKey } from 'noise-filter';

const root = fileURLToPath(new URL('./page-load/', import.meta.url));
const outDir = fileURLToPath(new URL('../../pkg/page-load', import.meta.url));
const runs = Number(process.env.RUNS ?? 5);
/** Chrome's presets, roughly, and the 1.6 Mbps link. Throughput in bytes/s. */
const PROFILES = {
  'no throttling': undefined,
  '10 Mbps, 40 ms': { latency: 40, downloadThroughput: 1_250_000, uploadThroughput: 625_000 },
  '1.6 Mbps, 150 ms': { latency: 150, downloadThroughput: 200_000, uploadThroughput: 94_000 },
  '400 kbps, 400 ms': { latency: 400, downloadThroughput: 50_000, uploadThroughput: 50_000 },
};

await build({ root, logLevel: 'warn', build: { outDir, emptyOutDir: true, rollupOptions: { input: join(root, 'page.html') } } });

const store = new MemoryStore();
const key = await createKey(store, { account: 'acme' });
const handle = createHandler({ keys: store, customPatterns: store });
const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };
const server = createServer(async (req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  const gzip = /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
  let status = 200;
  let headers;
  let body;
  if (path === '/noise-filter/v1/filters') {
    // The proxy of docs/NPM.md: the key added, the answer gzipped.
    const response = await handle(new Request('http://x/v1/filters', { headers: { authorization: `Bearer ${key}` } }));
    status = response.status;
    headers = { 'content-type': 'application/json' };
    body = Buffer.from(await response.arrayBuffer());
  } else {
    try {
      body = await readFile(join(outDir, path === '/' ? 'page.html' : path));
    } catch {
      return res.writeHead(404).end();
    }
    headers = { 'content-type': types[extname(path)] ?? 'text/html' };
  }
  // As a server compresses its static files and the proxy its answer.
  if (gzip && !path.endsWith('.html')) {
    body = gzipSync(body);
    headers['content-encoding'] = 'gzip';
  }
  res.writeHead(status, headers).end(body);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
try {
  console.log(`runs: ${runs} per profile; ms from the page's script start; medians (min-max)`);
  console.log('profile'.padEnd(20), 'wasm loaded'.padEnd(20), 'matcher built'.padEnd(20), "client's first answer");
  for (const [name, throttle] of Object.entries(PROFILES)) {
    const timings = [];
    for (let i = 0; i < runs; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      if (throttle) {
        const cdp = await context.newCDPSession(page);
        await cdp.send('Network.enable');
        await cdp.send('Network.emulateNetworkConditions', { offline: false, ...throttle });
      }
      await page.goto(`http://127.0.0.1:${server.address().port}/page.html`);
      await page.waitForFunction(() => window.__timing !== undefined, null, { timeout: 120_000 });
      timings.push(await page.evaluate(() => window.__timing));
      await context.close();
    }
    const cell = (k) => {
      const v = timings.map((t) => t[k]);
      return `${Math.round(median(v))} (${Math.round(Math.min(...v))}-${Math.round(Math.max(...v))})`.padEnd(20);
    };
    console.log(name.padEnd(20), cell('loaded'), cell('built'), cell('ready'));
  }
} finally {
  await browser.close();
  server.close();
}
