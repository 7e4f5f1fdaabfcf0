// The shared cases in headless Chromium, on a page Vite builds from the
// installed package (`import 'noise-filter'`: the `browser` condition, the
// wasm emitted as an asset). One node:test per case, so a failure names it.
import { test } from 'node:test';
import { createServer } from 'node:http';
import { copyFile, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, createServer as createViteServer } from 'vite';
import { chromium } from 'playwright-core';
import { build as esbuild } from 'esbuild';
import { MemoryStore, addCustomPatterns, createHandler, createKey } from 'noise-filter';
import { buildAll } from './bundlers/build.mjs';
import { nodeListener } from '../common/node-http.mjs';

const root = fileURLToPath(new URL('.', import.meta.url));
const outDir = fileURLToPath(new URL('../../pkg/browser', import.meta.url));
// Two pages: the whole package (index.html) and `noise-filter/matcher`
// alone (matcher.html), which must fetch only the matcher-only wasm.
await build({
  root,
  logLevel: 'warn',
  build: {
    outDir,
    emptyOutDir: true,
    chunkSizeWarningLimit: 4096,
    rollupOptions: { input: { main: join(root, 'index.html'), matcher: join(root, 'matcher.html'), sentry: join(root, 'sentry.html'), trackers: join(root, 'trackers.html') } },
  },
});

// The service worker: bundled with the `browser` condition, next to its wasm.
await esbuild({
  entryPoints: [fileURLToPath(new URL('sw.js', import.meta.url))],
  outfile: join(outDir, 'sw.js'),
  bundle: true,
  format: 'esm',
  conditions: ['browser'],
  logLevel: 'warning',
});
await copyFile(fileURLToPath(import.meta.resolve('noise-filter/noise_filter_bg.wasm')), join(outDir, 'noise_filter_bg.wasm'));
await copyFile(fileURLToPath(new URL('sw.html', import.meta.url)), join(outDir, 'sw.html'));

// The same page built by webpack, esbuild and Rollup (bundlers/build.mjs).
const bundlers = await buildAll(join(outDir, 'bundlers'));

// The service the bundled pages' clients fetch from, on the same origin.
const store = new MemoryStore();
const key = await createKey(store, { account: 'acme', label: 'bundler pages' });
await addCustomPatterns(store, 'acme', [{ pattern: 'acme-legacy-widget.js', category: 'third-party-script' }]);
const serveFilters = nodeListener(createHandler({ keys: store, customPatterns: store }));

// What the trackers' page's SDKs post (Datadog RUM through its `proxy`,
// PostHog to its `api_host`): recorded here, read back by the page.
const intake = [];
const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
const served = [];
const server = createServer(async (request, response) => {
  const path = new URL(request.url, 'http://x').pathname;
  if (path.endsWith('/filters')) return serveFilters(request, response);
  if (path === '/intake-log') return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(intake));
  if (path.startsWith('/dd-intake') || path.startsWith('/ph/')) {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    intake.push({ path, body: Buffer.concat(chunks).toString('utf8') });
    return response.writeHead(path.startsWith('/ph/') ? 200 : 202, { 'content-type': 'application/json' }).end('{}');
  }
  const file = path === '/' ? '/index.html' : path;
  served.push(file);
  try {
    const body = await readFile(join(outDir, file));
    response.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' }).end(body);
  } catch {
    response.writeHead(404).end();
  }
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));

const DESKTOP_CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
});

/** Opens `url`, waits for the page's cases, returns their results and page errors. */
async function runPage(url, options) {
  const page = await browser.newPage(options);
  const errors = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  await page.goto(url);
  await page.waitForFunction(() => window.__results !== undefined, null, { timeout: 120_000 });
  const results = await page.evaluate(() => window.__results);
  await page.close();
  return { results, errors };
}

let built;
let dev;
let worker;
let matcherPage;
let matcherDev;
let matcherServed;
let sentryPage;
let trackersPage;
const bundled = {};
try {
  built = await runPage(`http://127.0.0.1:${server.address().port}/`);
  served.length = 0;
  matcherPage = await runPage(`http://127.0.0.1:${server.address().port}/matcher.html`);
  matcherServed = [...served];
  sentryPage = await runPage(`http://127.0.0.1:${server.address().port}/sentry.html`);
  // A desktop Chrome's user agent: headless Chromium's own is noise (`HeadlessChrome`).
  trackersPage = await runPage(`http://127.0.0.1:${server.address().port}/trackers.html`, { userAgent: DESKTOP_CHROME });
  for (const name of Object.keys(bundlers)) {
    bundled[name] = await runPage(`http://127.0.0.1:${server.address().port}/bundlers/${name}/page.html?key=${encodeURIComponent(key)}`);
  }
  const swPage = await browser.newPage();
  await swPage.goto(`http://127.0.0.1:${server.address().port}/sw.html`);
  await swPage.waitForFunction(() => window.__sw !== undefined, null, { timeout: 60_000 });
  worker = await swPage.evaluate(() => window.__sw);
  await swPage.close();
  // Vite's dev server as it comes: the README says it needs no setting (Vite 8).
  const vite = await createViteServer({
    root,
    logLevel: 'warn',
    server: { host: '127.0.0.1', port: 0, fs: { allow: [fileURLToPath(new URL('../..', import.meta.url))] } },
  });
  await vite.listen();
  try {
    dev = await runPage(vite.resolvedUrls.local[0]);
    matcherDev = await runPage(`${vite.resolvedUrls.local[0]}matcher.html`);
  } finally {
    await vite.close();
  }
} finally {
  await browser.close();
  server.close();
}

test('the built page loads the package and its wasm in Chromium', () => {
  if (built.errors.length > 0) throw new Error(built.errors.join('\n'));
  if (!served.some((path) => path.endsWith('.wasm'))) throw new Error(`no wasm fetched: ${served.join(', ')}`);
});
test('the same cases pass under the Vite dev server, set up as it comes', () => {
  if (dev.errors.length > 0) throw new Error(dev.errors.join('\n'));
  const failed = dev.results.filter((r) => !r.ok);
  if (dev.results.length === 0 || failed.length > 0) throw new Error(failed.map((r) => `${r.name}: ${r.error}`).join('\n'));
});
test('a service worker serves the endpoint and matches with noise-filter/init', () => {
  if (worker.error) throw new Error(worker.error);
  const [status, body] = worker.denied;
  if (status !== 401 || body.error !== 'Missing or invalid Authorization header') throw new Error(JSON.stringify(worker.denied));
  if (worker.served[0] !== 200 || !(worker.served[1] > 0)) throw new Error(JSON.stringify(worker.served));
  if (!worker.verdict.noise) throw new Error(JSON.stringify(worker.verdict));
});
test('the matcher page fetches only the matcher-only wasm', () => {
  if (matcherPage.errors.length > 0) throw new Error(matcherPage.errors.join('\n'));
  const wasms = matcherServed.filter((path) => path.endsWith('.wasm'));
  if (wasms.length !== 1 || !wasms[0].includes('noise_filter_matcher_bg')) throw new Error(`fetched: ${wasms.join(', ')}`);
});
test('the matcher page passes under the Vite dev server too', () => {
  if (matcherDev.errors.length > 0) throw new Error(matcherDev.errors.join('\n'));
  const failed = matcherDev.results.filter((r) => !r.ok);
  if (matcherDev.results.length === 0 || failed.length > 0) throw new Error(failed.map((r) => `${r.name}: ${r.error}`).join('\n'));
});
for (const { name, ok, error } of matcherPage.results) {
  test(`chromium, noise-filter/matcher: ${name}`, () => {
    if (!ok) throw new Error(error);
  });
}
for (const [name, page] of Object.entries(bundled)) {
  test(`${name}: the page loads the matcher entry without page errors`, () => {
    if (page.errors.length > 0) throw new Error(page.errors.join('\n'));
    if (page.results.length !== 2) throw new Error(JSON.stringify(page.results));
  });
  for (const { name: check, ok, error } of page.results) {
    test(`chromium, built by ${name}: ${check}`, () => {
      if (!ok) throw new Error(error);
    });
  }
}
test('the @sentry/browser page runs without page errors', () => {
  if (sentryPage.errors.length > 0) throw new Error(sentryPage.errors.join('\n'));
  if (sentryPage.results.length !== 2) throw new Error(JSON.stringify(sentryPage.results));
});
for (const { name, ok, error } of sentryPage.results) {
  test(`chromium, @sentry/browser: ${name}`, () => {
    if (!ok) throw new Error(error);
  });
}
test('the Datadog RUM and PostHog page runs without page errors', () => {
  if (trackersPage.errors.length > 0) throw new Error(trackersPage.errors.join('\n'));
  if (trackersPage.results.length !== 6) throw new Error(JSON.stringify(trackersPage.results));
});
for (const { name, ok, error } of trackersPage.results) {
  test(`chromium, ${name}`, () => {
    if (!ok) throw new Error(error);
  });
}
for (const { name, ok, error } of built.results) {
  test(`chromium: ${name}`, () => {
    if (!ok) throw new Error(error);
  });
}
