// The npm command over the million events the core's benchmark writes
// (`cargo bench -p noise-filter-core --features report --bench report`),
// and the page it makes opened in Chromium (docs/BENCHMARKS.md, "Report").
//
//   node bench/report.mjs <events.jsonl> [page.html]
//
// Prints the command's CPU time and events a CPU second (the native figure
// is the Rust benchmark's, on the same file), its peak memory, and how long
// Chromium takes to load the page (median of 5).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const [file, page] = process.argv.slice(2);
if (!file || !existsSync(file)) {
  console.error('usage: node bench/report.mjs <events.jsonl> [page.html] (run the core benchmark first)');
  process.exit(2);
}
const cli = fileURLToPath(new URL('./cli.js', import.meta.resolve('noise-filter')));
const html = page ?? join(mkdtempSync(join(tmpdir(), 'nf-bench-')), 'report.html');

// /usr/bin/time's figures: the child's own CPU and peak resident memory.
const run = () =>
  new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%U %S %M %e', process.execPath, cli, 'report', file, '--json', ...(page ? [] : ['--html', html])], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(stderr));
      const [user, system, kb, wall] = stderr.trim().split('\n').pop().split(' ').map(Number);
      resolve({ cpu: user + system, mb: kb / 1024, wall });
    });
  });

const { cpu, mb, wall } = await run();
const events = Number(/sentry-(\d+)\.jsonl$/.exec(file)?.[1] ?? NaN);
console.log(
  `npm report: ${events} events, ${cpu.toFixed(2)} s CPU (${wall.toFixed(2)} s wall): ${Math.round(events / cpu)} events a CPU second; peak resident ${mb.toFixed(0)} MB`,
);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const loads = [];
for (let round = 0; round < 5; round++) {
  const tab = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const started = performance.now();
  await tab.goto(pathToFileURL(html).href, { waitUntil: 'load' });
  // The first frame drawn after load: the charts are on screen.
  await tab.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  loads.push(performance.now() - started);
  await tab.close();
}
await browser.close();
loads.sort((a, b) => a - b);
console.log(`page: opened and drawn in ${loads[2].toFixed(0)} ms (median of 5; ${loads.map((l) => l.toFixed(0)).join(', ')} ms)`);
