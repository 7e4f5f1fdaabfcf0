// The README's snippets, taken from the README itself (readme/extract.mjs:
// every JavaScript or TypeScript block is one, named by its marker), run
// here against the installed package as a user would run them. `tsc` checks
// them too (tsconfig.json, tsconfig.page.json); the page snippets run in
// Chromium (browser/browser.test.mjs).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { transform } from 'esbuild';
import { MemoryStore, addCustomPatterns, createHandler, createKey } from 'noise-filter';
import { SNIPPETS, snippets, writeSnippets } from '../readme/extract.mjs';
import { nodeListener } from '../common/node-http.mjs';

const written = writeSnippets();
const redirect = new URL('../readme/redirect.mjs', import.meta.url).pathname;

test('every JavaScript and TypeScript block of the READMEs is a named snippet, written as it stands', () => {
  const names = written.map((s) => s.name).sort();
  for (const expected of ['matcher.mjs', 'first-party.mjs', 'client.mjs', 'sentry-node.ts', 'sentry.page.ts', 'e2e.page.ts', 'bundled.page.ts', 'fetch-filters.sh', 'report.sh']) {
    assert.ok(names.includes(expected), `${expected} among ${names.join(', ')}`);
  }
  for (const { name, text } of snippets()) assert.equal(readFileSync(new URL(name, SNIPPETS), 'utf8'), text, name);
});

function run(file, env = {}, args = []) {
  const child = spawn(process.execPath, [...args, new URL(file, SNIPPETS).pathname], { env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return once(child, 'exit').then(([code]) => ({ code, stdout, stderr }));
}

/** A server on a free port of 127.0.0.1; resolves with its base URL. */
async function listen(listener) {
  const server = createServer(listener);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

test('matcher.mjs: classifies, and the beforeSend hook drops noise', async () => {
  const { code, stdout, stderr } = await run('matcher.mjs');
  assert.equal(code, 0, stderr);
  assert.match(stdout, /noise: true/);
  assert.match(stdout, /field: 'frame'/);
  assert.deepEqual(stdout.split('\n').filter((l) => l === 'true' || l === 'false'), ['false', 'true']);
  assert.match(stdout, /dropped: /);
});

test('first-party.mjs: frames all elsewhere are noise by the first-party rule; one own frame keeps the error', async () => {
  const { code, stdout, stderr } = await run('first-party.mjs');
  assert.equal(code, 0, stderr);
  const [verdict, own] = stdout.trim().split('\n');
  assert.deepEqual(JSON.parse(verdict), {
    noise: true,
    matches: [{ id: 'first-party-rule', category: 'third-party-script', tags: [], confidence: 1, field: 'frame', index: 0 }],
  });
  assert.equal(own, 'false');
});

test('serve-node.mjs serves; from-deployment.mjs builds a matcher from it', async () => {
  const server = spawn(process.execPath, [new URL('serve-node.mjs', SNIPPETS).pathname], { env: { ...process.env, PORT: '0' } });
  try {
    const lines = createInterface({ input: server.stdout });
    let url;
    let key;
    for await (const line of lines) {
      url ??= /^listening on (\S+)/.exec(line)?.[1];
      key ??= /^API key: (\S+)/.exec(line)?.[1];
      if (url && key) break;
    }
    const denied = await fetch(`${url}/v1/filters`);
    assert.equal(denied.status, 401);
    assert.deepEqual(await denied.json(), { error: 'Missing or invalid Authorization header' });
    const { code, stdout, stderr } = await run('from-deployment.mjs', { NOISE_FILTER_URL: url, NOISE_FILTER_KEY: key });
    assert.equal(code, 0, stderr);
    assert.equal(stdout, 'true\ntrue\n');
  } finally {
    server.kill();
  }
});

test('serve.mjs: a default export with fetch, as Deno and Bun serve it', async () => {
  const { default: app } = await import(new URL('serve.mjs', SNIPPETS));
  const response = await app.fetch(new Request('http://localhost/api/v1/filters', { headers: { Authorization: 'Bearer' } }));
  assert.equal(response.status, 401);
  assert.equal(response.headers.get('www-authenticate'), 'Bearer');
  assert.deepEqual(await response.json(), { error: 'API key required' });
});

test("client.mjs: the README's key, in the key format, fetches the account's set", async () => {
  const text = readFileSync(new URL('client.mjs', SNIPPETS), 'utf8');
  const readmeKey = /'(nf_[0-9a-f]{48})'/.exec(text)?.[1];
  assert.ok(readmeKey, 'the README shows a key of the real format: nf_ and 48 lowercase hex digits');
  // That very key, made real in the test's store (a key is nf_ and its random bytes in hex).
  const store = new MemoryStore();
  const random = Uint8Array.from(readmeKey.slice(3).match(/../g), (h) => parseInt(h, 16));
  assert.equal(await createKey(store, { account: 'acme', random }), readmeKey);
  await addCustomPatterns(store, 'acme', [{ pattern: 'legacy-widget.js', category: 'third-party-script' }]);
  const service = await listen(nodeListener(createHandler({ keys: store, customPatterns: store })));
  try {
    const { code, stdout, stderr } = await run('client.mjs', { NOISE_FILTER_TEST_URL: service.url }, ['--import', redirect]);
    assert.equal(code, 0, stderr);
    assert.equal(stdout, 'true\ntrue\n');
  } finally {
    service.close();
  }
});

test('sentry-node.ts: createBeforeSend as Sentry.init({ dsn, beforeSend }) takes it: noise dropped, the real error sent', async () => {
  // The snippet without its types (what tsc checked is the README's text), run by Node.
  const { code: js } = await transform(readFileSync(new URL('sentry-node.ts', SNIPPETS), 'utf8'), { loader: 'ts', format: 'esm' });
  const runnable = new URL('run/', SNIPPETS);
  mkdirSync(runnable, { recursive: true });
  writeFileSync(new URL('sentry-node.mjs', runnable), js);
  const events = [];
  const sentry = await listen(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const lines = body.split('\n');
    for (let i = 1; i + 1 < lines.length; i += 2) {
      if (JSON.parse(lines[i]).type === 'event') events.push(JSON.parse(lines[i + 1]));
    }
    res.writeHead(200).end('{}');
  });
  try {
    const dsn = sentry.url.replace('http://', 'http://public@') + '/1';
    const { code, stdout, stderr } = await run('run/sentry-node.mjs', { SENTRY_DSN: dsn });
    assert.equal(code, 0, stderr);
    assert.equal(stdout, 'dropped: 1\n');
    assert.deepEqual(events.map((e) => e.exception.values[0].value), ['invoice total is negative']);
  } finally {
    sentry.close();
  }
});

test('report.sh: npx noise-filter report runs as shown', async () => {
  // An export in Sentry's API shape (core/tests/report/, copied by the xtask).
  const template = JSON.parse(readFileSync(new URL('../../pkg/report/sentry-api-event.json', import.meta.url), 'utf8'));
  const messages = ['ResizeObserver loop limit exceeded', ...[1, 2, 3].map((i) => `Cannot read properties of undefined (reading 'field${i}')`)];
  const events = messages.map((message, i) => {
    const event = structuredClone(template);
    event.eventID = String(i).padStart(32, '0');
    event.entries[0].data.values[0].type = 'TypeError';
    event.entries[0].data.values[0].value = message;
    return event;
  });
  // Inside the test project, so `npx` finds the installed package there;
  // offline, so it can never fetch one of that name instead.
  const cwd = mkdtempSync(join(fileURLToPath(new URL('..', import.meta.url)), '.readme-'));
  after(() => rmSync(cwd, { recursive: true, force: true }));
  writeFileSync(join(cwd, 'events.json'), JSON.stringify(events));
  const child = spawn('sh', ['-e', fileURLToPath(new URL('report.sh', SNIPPETS))], {
    cwd,
    env: { ...process.env, npm_config_offline: 'true', npm_config_yes: 'false' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const [code] = await once(child, 'exit');
  assert.equal(code, 0, stderr);
  assert.match(stdout, /TypeError: Cannot read properties of undefined \(reading '<value>'\)/);
  assert.match(stdout, /Candidate patterns/);
  assert.match(readFileSync(join(cwd, 'report.html'), 'utf8'), /^<!doctype html>/);
  const emitted = JSON.parse(readFileSync(join(cwd, 'patterns.json'), 'utf8'));
  assert.equal(emitted[0].type, 'regex');
});
