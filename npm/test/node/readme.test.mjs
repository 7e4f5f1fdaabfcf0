// The README's snippets are the files of ../readme/, included verbatim (this
// test fails when they drift apart), and each one runs here against the
// installed package. `tsc` checks them too (../tsconfig.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

const dir = new URL('../readme/', import.meta.url);
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const snippets = readdirSync(dir).filter((f) => f.endsWith('.mjs'));

for (const file of snippets) {
  test(`README includes readme/${file} verbatim`, () => {
    const text = readFileSync(new URL(file, dir), 'utf8');
    assert.ok(readme.includes('```js\n' + text + '```'), `README.md lacks the text of test/readme/${file}`);
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
