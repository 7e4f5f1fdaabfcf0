// The README's snippets are the files of ../readme/, included verbatim (this
// test fails when they drift apart), and each one runs here against the
// installed package. `tsc` checks them too (../tsconfig.json).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

const dir = new URL('../readme/', import.meta.url);
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const snippets = readdirSync(dir).filter((f) => f.endsWith('.mjs'));
const shellSnippets = readdirSync(dir).filter((f) => f.endsWith('.sh'));

for (const file of snippets) {
  test(`README includes readme/${file} verbatim`, () => {
    const text = readFileSync(new URL(file, dir), 'utf8');
    assert.ok(readme.includes('```js\n' + text + '```'), `README.md lacks the text of test/readme/${file}`);
  });
}

for (const file of shellSnippets) {
  test(`README includes readme/${file} verbatim`, () => {
    const text = readFileSync(new URL(file, dir), 'utf8');
    assert.ok(readme.includes('```sh\n' + text + '```'), `README.md lacks the text of test/readme/${file}`);
  });
}

function run(file, env = {}) {
  const child = spawn(process.execPath, [new URL(file, dir).pathname], { env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return once(child, 'exit').then(([code]) => ({ code, stdout, stderr }));
}

test('readme/matcher.mjs: classifies, and the beforeSend hook drops noise', async () => {
  const { code, stdout, stderr } = await run('matcher.mjs');
  assert.equal(code, 0, stderr);
  assert.match(stdout, /noise: true/);
  assert.match(stdout, /field: 'frame'/);
  assert.deepEqual(stdout.split('\n').filter((l) => l === 'true' || l === 'false'), ['false', 'true']);
  assert.match(stdout, /dropped: /);
});

test('readme/matcher-entry.mjs: noise-filter/matcher classifies and drops noise', async () => {
  const { code, stdout, stderr } = await run('matcher-entry.mjs');
  assert.equal(code, 0, stderr);
  assert.equal(stdout, 'true\ntrue\n');
});

test('readme/serve-node.mjs serves; readme/from-deployment.mjs builds a matcher from it', async () => {
  const server = spawn(process.execPath, [new URL('serve-node.mjs', dir).pathname], { env: { ...process.env, PORT: '0' } });
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

test('readme/serve.mjs: a default export with fetch, as Deno and Bun serve it', async () => {
  const { default: app } = await import(new URL('serve.mjs', dir));
  const response = await app.fetch(new Request('http://localhost/api/v1/filters', { headers: { Authorization: 'Bearer' } }));
  assert.equal(response.status, 401);
  assert.equal(response.headers.get('www-authenticate'), 'Bearer');
  assert.deepEqual(await response.json(), { error: 'API key required' });
});

test('readme/report.sh: npx noise-filter report runs as shown', async () => {
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
  const child = spawn('sh', ['-e', fileURLToPath(new URL('report.sh', dir))], {
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
