// A public site's pages behind the caching proxy docs/NPM.md describes
// ("Pages of a public site"), for real: the host binary (`noise-filter
// serve`) over its SQLite store, with a key and a custom pattern made by its
// own admin CLI; nginx from the two configuration blocks of docs/NPM.md as
// written (only the upstream's port, the key and the cache's folder
// replaced); then 20,000 visitors, each on a connection of its own, asking
// as a page's client does (no key, `Accept-Encoding: gzip`). The host's
// access log says how many requests reached it.
//
// NOISE_FILTER_HOST_BIN names the binary and NOISE_FILTER_COMPONENT its
// component (`cargo xtask npm test` sets them when the host is built, and
// `cargo xtask ci` always builds it); nginx comes from Debian.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { gunzipSync } from 'node:zlib';
import { snippets } from '../readme/extract.mjs';
import { adminCli, freePort, serveHost } from '../common/host-process.mjs';

const VISITORS = 20_000;
/** Visitors asking at once (each on a new connection). */
const AT_ONCE = 64;
const host = process.env.NOISE_FILTER_HOST_BIN;
const docs = new URL('../../../docs/NPM.md', import.meta.url);
const blocks = Object.fromEntries(snippets([docs]).map((s) => [s.name, s.text]));

const work = await mkdtemp(join(tmpdir(), 'noise-filter-proxy-'));
// nginx's workers run as `nobody` when the master is root: the folder is theirs too.
await chmod(work, 0o777);

/** Runs the host's admin CLI on the test's store; returns its stdout. */
const admin = adminCli(host, join(work, 'state'));

/** Starts `noise-filter serve`; resolves with its port and the access lines it logs. */
async function serve() {
  const { child, port } = await serveHost(host, ['--state-dir', join(work, 'state'), '--log-format', 'json'], { stderr: 'pipe' });
  const access = [];
  createInterface({ input: child.stderr }).on('line', (line) => {
    try {
      const entry = JSON.parse(line);
      if (entry.target === 'access') access.push(entry.fields ?? entry);
    } catch {
      /* a line that is not JSON is not an access line */
    }
  });
  return { child, port, access };
}

/** nginx from the docs' blocks; `change` may alter the location block (the lifetime test's). */
async function nginx(servicePort, key, change = (block) => block) {
  const port = await freePort();
  const httpBlock = blocks['proxy-http.conf']
    .replace('/var/cache/nginx/noise-filter', join(work, `cache-${port}`))
    .replace('server 127.0.0.1:8080;', `server 127.0.0.1:${servicePort};`);
  const keyed = blocks['proxy-location.conf'].replace(/Bearer nf_[0-9a-f]{48}/, `Bearer ${key}`);
  assert.notEqual(keyed, blocks['proxy-location.conf'], 'the docs show a key of the real format where nginx adds it');
  const location = change(keyed);
  const dir = join(work, `nginx-${port}`);
  await mkdir(dir, { recursive: true });
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${join(dir, t)};`).join('\n  ');
  const conf = `worker_processes 2;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 1024; }
http {
  access_log off;
  ${temp}
${httpBlock}
  server {
    listen 127.0.0.1:${port};
${location}
  }
}
`;
  await writeFile(join(dir, 'nginx.conf'), conf);
  const child = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'inherit', 'inherit'] });
  await waitFor(() => get(port).then(() => true, () => false));
  return { child, port };
}

async function waitFor(ready, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error('not ready in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One visitor: a connection of its own, a page client's request (or `odd`: its own query and headers). */
function get(port, keep = false, odd = { query: '', headers: {} }) {
  return new Promise((resolve, reject) => {
    const headers = { 'accept-encoding': 'gzip', 'user-agent': 'Mozilla/5.0 (visitor)', ...odd.headers };
    const req = request(
      { host: '127.0.0.1', port, path: `/noise-filter/v1/filters${odd.query}`, agent: false, headers },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => keep && chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** `count` visitors, `AT_ONCE` at a time; resolves with their statuses and a few bodies. */
async function visitors(port, count) {
  const statuses = new Map();
  const samples = [];
  let next = 0;
  async function lane() {
    while (next < count) {
      const i = next++;
      const keep = i % 5000 === 0;
      const { status, headers, body } = await get(port, keep);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (keep) samples.push({ headers, body });
    }
  }
  await Promise.all(Array.from({ length: AT_ONCE }, lane));
  return { statuses: Object.fromEntries(statuses), samples };
}

const reachedFilters = (access) => access.filter((line) => line.path === '/v1/filters');

test(`${VISITORS} visitors behind the docs' nginx: every one gets the account's list, a handful of requests reach the service`, { skip: host === undefined && 'NOISE_FILTER_HOST_BIN is not set (cargo build -p noise-filter-host; cargo xtask ci always runs this)' }, async () => {
  const key = await admin('keys', 'create', '--account', 'acme', '--label', 'site proxy');
  assert.match(key, /^nf_[0-9a-f]{48}$/);
  await admin('patterns', 'add', '--account', 'acme', '--pattern', 'acme-legacy-widget.js', '--category', 'third-party-script');
  const service = await serve();
  const proxy = await nginx(service.port, key);
  try {
    const started = Date.now();
    const { statuses, samples } = await visitors(proxy.port, VISITORS);
    const took = Date.now() - started;
    assert.deepEqual(statuses, { 200: VISITORS });
    for (const { headers, body } of samples) {
      assert.equal(headers['content-encoding'], 'gzip');
      const list = JSON.parse(gunzipSync(body));
      assert.ok(list.patterns.some((p) => p.pattern === 'acme-legacy-widget.js'), "the account's own pattern is in every visitor's list");
    }
    const reached = reachedFilters(service.access);
    console.log(`# ${VISITORS} visitors in ${took} ms; requests that reached the service: ${reached.length} (statuses ${reached.map((l) => l.status).join(', ')})`);
    assert.ok(reached.length >= 1 && reached.length <= 5, `${reached.length} requests reached the service`);
    assert.ok(reached.every((l) => l.key !== '-'), 'each with the key the proxy added');
    // What a visitor sends cannot make the proxy ask the service again:
    // another query string, a key of its own, an ETag of its own.
    for (let i = 0; i < 20; i++) {
      const odd = { query: `?minConfidence=0&n=${i}`, headers: { authorization: `Bearer nf_${String(i).padStart(48, '0')}`, 'if-none-match': `"${i}"` } };
      assert.equal((await get(proxy.port, false, odd)).status, 200);
    }
    // A visitor that accepts no coding, and one that prefers brotli: the
    // same cached gzip answer, decoded by nginx for the first.
    const plain = await get(proxy.port, true, { query: '', headers: { 'accept-encoding': 'identity' } });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.ok(JSON.parse(plain.body).patterns.some((p) => p.pattern === 'acme-legacy-widget.js'));
    const browser = await get(proxy.port, true, { query: '', headers: { 'accept-encoding': 'gzip, deflate, br, zstd' } });
    assert.equal(browser.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(browser.body), plain.body);
    assert.equal(reachedFilters(service.access).length, reached.length, 'no visitor reached the service');
  } finally {
    proxy.child.kill();
    service.child.kill();
  }
});

test('refresh periods pass: one revalidation a period reaches the service, answered 304 (not counted)', { skip: host === undefined && 'NOISE_FILTER_HOST_BIN is not set' }, async () => {
  const key = await admin('keys', 'create', '--account', 'acme', '--label', 'site proxy, short lifetime');
  const service = await serve();
  // The one change to the docs' blocks: the answer lives 2 s instead of the service's 300 s.
  const proxy = await nginx(service.port, key, (block) => {
    const shortened = block.replace('proxy_ignore_headers Vary;', 'proxy_ignore_headers Vary Cache-Control Expires;\n    proxy_cache_valid 200 2s;');
    assert.notEqual(shortened, block);
    return shortened;
  });
  try {
    // A period ends well past the answer's 2 s, so each one revalidates
    // even when the last revalidation landed late in a loaded machine's
    // period.
    for (let period = 0; period < 4; period++) {
      await visitors(proxy.port, 500);
      await new Promise((r) => setTimeout(r, 4000));
    }
    await visitors(proxy.port, 500);
    await new Promise((r) => setTimeout(r, 1000)); // the background revalidation's access line
    const reached = reachedFilters(service.access);
    console.log(`# 5 periods of 500 visitors: requests that reached the service: ${reached.map((l) => l.status).join(', ')}`);
    assert.equal(reached[0].status, 200, 'the first fill');
    assert.ok(reached.length <= 1 + 5, `${reached.length} requests for 5 periods`);
    assert.ok(reached.slice(1).length >= 3 && reached.slice(1).every((l) => l.status === 304), 'the revalidations are 304s');
  } finally {
    proxy.child.kill();
    service.child.kill();
  }
});

after(() => rm(work, { recursive: true, force: true }));
