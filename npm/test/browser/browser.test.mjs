// The shared cases in headless Chromium, on a page Vite builds from the
// installed package (`import 'noise-filter'`: the `browser` condition, the
// wasm emitted as an asset). One node:test per case, so a failure names it.
import { test } from 'node:test';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('.', import.meta.url));
const outDir = fileURLToPath(new URL('../../pkg/browser', import.meta.url));
await build({ root, logLevel: 'warn', build: { outDir, emptyOutDir: true, chunkSizeWarningLimit: 4096 } });

const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
const served = [];
const server = createServer(async (request, response) => {
  const path = new URL(request.url, 'http://x').pathname;
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
let results;
const errors = [];
try {
  const page = await browser.newPage();
  page.on('pageerror', (error) => errors.push(String(error)));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => window.__results !== undefined || document.title === 'error', null, { timeout: 120_000 });
  results = await page.evaluate(() => window.__results);
} finally {
  await browser.close();
  server.close();
}

test('the page loads the package and its wasm in Chromium', () => {
  if (errors.length > 0) throw new Error(errors.join('\n'));
  if (!served.some((path) => path.endsWith('.wasm'))) throw new Error(`no wasm fetched: ${served.join(', ')}`);
});
for (const { name, ok, error } of results ?? []) {
  test(`chromium: ${name}`, () => {
    if (!ok) throw new Error(error);
  });
}
