// Compressed answers as real clients read them, from the real servers: the
// host binary (`noise-filter serve`, serving the Spin component over its
// SQLite store) and the same component under real Spin (`spin up` with the
// repository's spin.toml and runtime-config.toml). Headless Chromium's
// `fetch` (which sends its own `Accept-Encoding: gzip, deflate, br, zstd`;
// a page cannot change it) and Node's `fetch` (`gzip, deflate`) must read
// exactly the bytes a client without `Accept-Encoding` is sent, for the
// usual answer (brotli for Chromium, gzip for Node) and for an account's
// own list (composed gzip for both).
//
// NOISE_FILTER_HOST_BIN names the host binary and NOISE_FILTER_COMPONENT
// its component (`cargo xtask npm test` sets them); SPIN_BIN names Spin
// (without it the Spin half says it is skipped); CHROMIUM the browser.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';
import { adminCli, freePort, serveHost } from '../common/host-process.mjs';

const host = process.env.NOISE_FILTER_HOST_BIN;
const component = process.env.NOISE_FILTER_COMPONENT;
const spin = process.env.SPIN_BIN;
const work = await mkdtemp(join(tmpdir(), 'noise-filter-decode-'));
const children = [];
let browser;

after(async () => {
  await browser?.close();
  for (const child of children) child.kill('SIGKILL');
  await rm(work, { recursive: true, force: true });
});

/** Two accounts in `state`: `beta` with no pattern of its own, `acme` with one. */
async function accounts(state) {
  const admin = (...args) => adminCli(host, state)(...args);
  const beta = await admin('keys', 'create', '--account', 'beta', '--label', 'decode');
  const acme = await admin('keys', 'create', '--account', 'acme', '--label', 'decode');
  await admin('patterns', 'add', '--account', 'acme', '--pattern', 'acme-legacy-widget.js', '--category', 'third-party-script');
  return { beta, acme };
}

/** A GET with no `Accept-Encoding`, as curl or Python's urllib send it. */
function identity(base, target, key) {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${target}`, { headers: { authorization: `Bearer ${key}` }, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function startHost() {
  const state = join(work, 'host');
  const keys = await accounts(state);
  // Its access lines (stderr) are not this test's concern.
  const { child, base } = await serveHost(host, ['--state-dir', state, '--component', component]);
  children.push(child);
  return { base, keys };
}

async function startSpin() {
  const app = join(work, 'spin');
  // The app folder as a Spin user has it; keys in Spin's own store
  // (`.spin/sqlite_key_value.db`), made by the admin CLI.
  await mkdir(join(app, '.spin'), { recursive: true });
  const manifest = await readFile(new URL('../../../spin-app/spin.toml', import.meta.url), 'utf8');
  const pointed = manifest.replace(/^source = .*$/m, `source = ${JSON.stringify(component)}`);
  assert.notEqual(pointed, manifest, 'spin.toml names its component in a `source = ` line');
  await writeFile(join(app, 'spin.toml'), pointed);
  await writeFile(join(app, 'runtime-config.toml'), await readFile(new URL('../../../spin-app/runtime-config.toml', import.meta.url)));
  const keys = await accounts(join(app, '.spin'));
  const port = await freePort();
  const child = spawn(spin, ['up', '--runtime-config-file', 'runtime-config.toml', '--listen', `127.0.0.1:${port}`], {
    cwd: app,
    env: { ...process.env, SPIN_DISABLE_TELEMETRY: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  children.push({ kill: (signal) => process.kill(-child.pid, signal) });
  const lines = createInterface({ input: child.stdout });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('spin up did not say it was serving within 60 s')), 60_000);
    lines.on('line', (line) => {
      if (line.includes('Serving http://')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return { base: `http://127.0.0.1:${port}`, keys };
}

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
});

/** What a page on `base` reads with fetch: status, coding and the decoded bytes as hex. */
async function chromiumFetch(base, target, key) {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    // The page's origin is the server's own (its 404 for an unknown path),
    // so the answer's every header is visible to the page.
    await page.goto(`${base}/decode-test`);
    return await page.evaluate(
      async ({ target, key }) => {
        const response = await fetch(target, { headers: { authorization: `Bearer ${key}` } });
        const bytes = new Uint8Array(await response.arrayBuffer());
        return {
          status: response.status,
          encoding: response.headers.get('content-encoding'),
          hex: Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(''),
        };
      },
      { target, key },
    );
  } finally {
    await context.close();
  }
}

async function nodeFetch(base, target, key) {
  const response = await fetch(`${base}${target}`, { headers: { authorization: `Bearer ${key}` } });
  return {
    status: response.status,
    encoding: response.headers.get('content-encoding'),
    hex: Buffer.from(await response.arrayBuffer()).toString('hex'),
  };
}

/** Each request: the account, and the coding Chromium and Node are answered in. */
const REQUESTS = [
  { target: '/v1/filters', account: 'beta', chromium: 'br', node: 'gzip' },
  { target: '/api/v1/filters', account: 'beta', chromium: 'br', node: 'gzip' },
  { target: '/v1/filters', account: 'acme', chromium: 'gzip', node: 'gzip' },
  { target: '/api/v1/filters?minConfidence=0.9', account: 'acme', chromium: 'gzip', node: 'gzip' },
];

async function decodesToIdentity(server) {
  for (const { target, account, chromium: inChromium, node } of REQUESTS) {
    const key = server.keys[account];
    const plain = await identity(server.base, target, key);
    assert.equal(plain.status, 200, `${target} (${account}) without Accept-Encoding`);
    assert.equal(plain.headers['content-encoding'], undefined, `${target}: no Accept-Encoding, no coding`);
    const expected = plain.body.toString('hex');
    for (const [client, read, coding] of [
      ['Chromium', chromiumFetch, inChromium],
      ['Node', nodeFetch, node],
    ]) {
      const got = await read(server.base, target, key);
      assert.equal(got.status, 200, `${client} ${target} (${account})`);
      assert.equal(got.encoding, coding, `${client} ${target} (${account}): the coding`);
      assert.ok(got.hex === expected, `${client} ${target} (${account}): the decoded bytes are not the identity bytes`);
    }
  }
}

test('the host: Chromium and Node decode its compressed answers to the identity bytes', { skip: !host && 'no NOISE_FILTER_HOST_BIN' }, async () => {
  await decodesToIdentity(await startHost());
});

test('real Spin: Chromium and Node decode the component\'s compressed answers to the identity bytes', { skip: (!spin && 'no SPIN_BIN: Spin is not installed') || (!host && 'no NOISE_FILTER_HOST_BIN') }, async () => {
  await decodesToIdentity(await startSpin());
});
