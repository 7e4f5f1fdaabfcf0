// The report's page (`--html`) in headless Chromium: it loads with no
// request beyond itself and no console error, its charts are drawn, and a
// table sorts when a column's head is clicked. The page is made by the
// installed package's command from the evaluation set (with a message that
// tries to inject markup); a screenshot is left in pkg/report-page.png.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const oracle = JSON.parse(readFileSync(new URL('../../pkg/oracle.json', import.meta.url), 'utf8'));
const cli = fileURLToPath(new URL('./cli.js', import.meta.resolve('noise-filter')));
const dir = mkdtempSync(join(tmpdir(), 'noise-filter-page-'));
const screenshot = fileURLToPath(new URL('../../pkg/report-page.png', import.meta.url));

const lines = oracle.events
  .filter((e) => e.label !== 'fixture')
  .map(({ event }, i) => {
    const day = String(1 + ((i * 7) % 28)).padStart(2, '0');
    return JSON.stringify({ ...event, timestamp: `2026-10-${day}T10:00:00Z`, user: `u${i % 41}`, issue: String(i % 61) });
  });
lines.push(JSON.stringify({ message: '<img src=x onerror="fetch(\'https://evil.example/\')"> <script>alert(1)</script>', user: 'x' }));
const exportPath = join(dir, 'events.jsonl');
writeFileSync(exportPath, lines.join('\n') + '\n');
const page = join(dir, 'report.html');
execFileSync(process.execPath, [cli, 'report', exportPath, '--html', page, '--first-party', 'https://app.example', '--json']);

let browser;
before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});
after(() => browser?.close());

test('the page loads with no request but itself and no console error; its charts are drawn', async () => {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const tab = await context.newPage();
  const requests = [];
  const problems = [];
  tab.on('request', (r) => requests.push(r.url()));
  tab.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
  });
  tab.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  const url = pathToFileURL(page).href;
  await tab.goto(url, { waitUntil: 'load' });
  assert.deepEqual(requests, [url], 'nothing fetched but the page itself');
  assert.deepEqual(problems, []);
  // The injected markup is text, not elements.
  assert.equal(await tab.locator('img').count(), 0);
  assert.equal(await tab.locator('script').count(), 1);
  // Each chart has its bars, with a size.
  for (const [chart, least] of [['#chart-time', 20], ['#chart-categories', 5], ['#chart-patterns', 10]]) {
    const bars = tab.locator(`${chart} rect`);
    assert.ok((await bars.count()) >= least, `${chart}: ${await bars.count()} bars`);
    const box = await tab.locator(chart).boundingBox();
    assert.ok(box.width > 600 && box.height > 60, `${chart}: ${JSON.stringify(box)}`);
  }
  const noiseHeights = await tab.$$eval('#chart-time rect.bar-noise', (rects) => rects.map((r) => r.getBBox().height));
  assert.ok(noiseHeights.some((h) => h > 5), 'some noise bars have a height');
  await tab.screenshot({ path: screenshot, fullPage: true });
  assert.ok(statSync(screenshot).size > 20_000);
  await context.close();
});

test('a table sorts by the column clicked, both ways', async () => {
  const tab = await browser.newPage();
  await tab.goto(pathToFileURL(page).href);
  const table = tab.locator('#table-patterns');
  const column = async (index) =>
    table.locator('tbody tr').evaluateAll((rows, i) => rows.map((r) => r.cells[i].getAttribute('data-v') ?? r.cells[i].textContent), index);
  // `only it` (numeric, index 3): first click descending, second ascending.
  const head = table.locator('th').nth(3);
  await head.click();
  const down = (await column(3)).map(Number);
  assert.ok(down.length > 10);
  assert.deepEqual(down, [...down].sort((a, b) => b - a));
  assert.equal(await head.getAttribute('aria-sort'), 'descending');
  await head.click();
  const up = (await column(3)).map(Number);
  assert.deepEqual(up, [...up].sort((a, b) => a - b));
  // A text column sorts alphabetically.
  await table.locator('th').nth(1).click();
  const categories = await column(1);
  assert.deepEqual(categories, [...categories].sort((a, b) => a.localeCompare(b)));
  await tab.close();
});
