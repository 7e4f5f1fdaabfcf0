// `npx noise-filter report` against the Rust binary's `noise-filter report`:
// the same core, so the same bytes for the same file and arguments (the
// summary, --json, the page, the emitted files, the refusals). Exports are
// built from Sentry's own event shapes (core/tests/report/, copied to
// pkg/report/ by `cargo xtask npm test`) filled with the evaluation set,
// with malformed lines; NOISE_FILTER_BIN is the Rust binary the xtask built.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const read = (path) => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));
const oracle = read('../../pkg/oracle.json');
const apiTemplate = read('../../pkg/report/sentry-api-event.json');
const eventTemplate = read('../../pkg/report/sentry-event.json');
const events = oracle.events.filter((e) => e.label !== 'fixture').map((e) => e.event);

const cli = fileURLToPath(new URL('./cli.js', import.meta.resolve('noise-filter')));
const bin = new URL('../node_modules/.bin/noise-filter', import.meta.url);
const rust = process.env.NOISE_FILTER_BIN;
const dir = mkdtempSync(join(tmpdir(), 'noise-filter-report-'));

/** Runs a command; resolves to its exit code, stdout and stderr. */
function run(command, args, { input, env = {} } = {}) {
  const child = spawn(command, args, { env: { ...process.env, NOISE_FILTER_KEY: '', ...env } });
  const out = [];
  const err = [];
  child.stdout.on('data', (d) => out.push(d));
  child.stderr.on('data', (d) => err.push(d));
  child.stdin.end(input);
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() })),
  );
}

const npmReport = (args, options) => run(process.execPath, [cli, 'report', ...args], options);
const rustReport = (args, options) => run(rust, ['report', ...args], options);

function stamp(i) {
  const day = 1 + ((i * 7) % 28);
  return { at: `2026-10-${String(day).padStart(2, '0')}T${String(i % 24).padStart(2, '0')}:15:00Z`, user: String(i % 37), issue: String(100 + (i % 53)) };
}

function apiEvent(e, i) {
  const { at, user, issue } = stamp(i);
  const v = structuredClone(apiTemplate);
  v.eventID = i.toString(16).padStart(32, '0');
  v.dateCreated = at;
  v.groupID = issue;
  v.user.id = user;
  const exception = v.entries[0].data.values[0];
  delete exception.type;
  exception.value = e.message ?? null;
  const frame = exception.stacktrace.frames[0];
  exception.stacktrace.frames = (e.frames ?? []).map((url) => ({ ...frame, absPath: url }));
  exception.rawStacktrace.frames = [];
  v.entries[2].data.headers = e.userAgent === undefined ? [] : [['User-Agent', e.userAgent]];
  return v;
}

function sentryEvent(e, i) {
  const { at, user } = stamp(i);
  const v = structuredClone(eventTemplate);
  v.event_id = i.toString(16).padStart(32, '0');
  v.timestamp = at;
  v.user = { id: user };
  const exception = v.exception.values[0];
  delete exception.type;
  exception.value = e.message ?? null;
  exception.stacktrace.frames = (e.frames ?? []).map((url) => ({ filename: url, function: '?', in_app: false }));
  if (e.userAgent !== undefined) v.request.headers = { 'User-Agent': e.userAgent };
  return v;
}

const csvField = (text) => (/[,"\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
const pythonList = (items) => `[${items.map((s) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`).join(', ')}]`;

function discoverCsv() {
  let out = 'title,timestamp,issue,user.display,stack.abs_path,user_agent,count\r\n';
  events.forEach((e, i) => {
    const { at, user, issue } = stamp(i);
    out += [csvField(e.message ?? ''), at.replace('Z', '+00:00'), issue, `id:${user}`, csvField(pythonList(e.frames ?? [])), csvField(e.userAgent ?? ''), String(1 + (i % 3))].join(',') + '\r\n';
    // Malformed rows, with their lines: a field short, a bad time, a count that is no number.
    if (i === 10) out += 'only,three,fields\r\n';
    if (i === 20) out += `x,yesterday,1,id:1,[],,1\r\n`;
    if (i === 30) out += `x,2026-10-01T00:00:00+00:00,1,id:1,[],,many\r\n`;
  });
  return out;
}

function file(name, content) {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const exports = {
  'api.json': () => JSON.stringify(events.map(apiEvent)),
  'api-lines.jsonl': () => events.map((e, i) => JSON.stringify(apiEvent(e, i))).join('\n') + '\n{"eventID": "cut\n',
  'sentry.json': () => events.map((e, i) => JSON.stringify(sentryEvent(e, i), null, 2)).join('\n') + '\n',
  'discover.csv': discoverCsv,
  'matcher.jsonl.gz': () =>
    gzipSync(events.map((e, i) => JSON.stringify({ ...e, timestamp: stamp(i).at, user: stamp(i).user }) + (i === 5 ? '\n{"mesage": "misspelt"}' : '')).join('\n')),
};
const paths = Object.fromEntries(Object.entries(exports).map(([name, make]) => [name, file(name, make())]));

const argSets = [
  [],
  ['--json'],
  ['--top', '3', '--min-confidence', '0.9'],
  ['--pattern', 're:^TypeError: Cannot read properties of (null|undefined)', '--pattern', 'Script error', '--first-party', 'https://app.example', '--json'],
  ['--accept', 'all', '--emit', 'patterns'],
  ['--emit', 'sentry', '--accept', '1,2'],
];

test('the Rust binary is there to compare with', () => {
  assert.ok(rust !== undefined && existsSync(rust), `NOISE_FILTER_BIN=${rust}`);
});

for (const [name, path] of Object.entries(paths)) {
  test(`${name}: the npm command says what the Rust one says, byte for byte`, async () => {
    for (const args of argSets) {
      const [n, r] = await Promise.all([npmReport([path, ...args]), rustReport([path, ...args])]);
      assert.equal(n.code, 0, `${args.join(' ')}: ${n.stderr}`);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(n.stdout, r.stdout, `${name} ${args.join(' ')}`);
      assert.ok(n.stdout.length > 100);
    }
    const [htmlN, htmlR] = [join(dir, `${name}.npm.html`), join(dir, `${name}.rust.html`)];
    await Promise.all([npmReport([path, '--html', htmlN, '--json']), rustReport([path, '--html', htmlR, '--json'])]);
    assert.equal(readFileSync(htmlN, 'utf8'), readFileSync(htmlR, 'utf8'));
  });
}

test('the numbers are the matcher\'s, and malformed records are counted with their line', async () => {
  const noise = oracle.verdicts.builtinDefault.filter((v, i) => oracle.events[i].label !== 'fixture' && v.noise).length;
  const api = JSON.parse((await npmReport([paths['api.json'], '--json'])).stdout);
  assert.equal(api.input.events, events.length);
  assert.equal(api.noise.events.noise, noise);
  assert.equal(api.input.malformed, 0);
  const lines = JSON.parse((await npmReport([paths['api-lines.jsonl'], '--json'])).stdout);
  assert.deepEqual(lines.input.malformedFirst.map((m) => m.line), [events.length + 1]);
  const csv = JSON.parse((await npmReport([paths['discover.csv'], '--json'])).stdout);
  // Rows stand for their count (1, 2, 3, 1, …).
  assert.equal(csv.input.records, events.length);
  assert.equal(csv.input.events, events.reduce((sum, _, i) => sum + 1 + (i % 3), 0));
  assert.deepEqual(csv.input.malformedFirst.map((m) => m.line), [13, 24, 35]);
  assert.match(csv.input.malformedFirst[0].why, /3 fields where the header has 7/);
  const gz = JSON.parse((await npmReport([paths['matcher.jsonl.gz'], '--json'])).stdout);
  assert.equal(gz.input.malformed, 1);
  assert.match(gz.input.malformedFirst[0].why, /unknown field `mesage`/);
  assert.equal(gz.noise.issues, null, 'no issue in the export: null, not 0');
  assert.ok(gz.missing.some((m) => m.startsWith('issues:')));
});

test('standard input, and the installed bin (`npx noise-filter`)', async () => {
  const input = readFileSync(paths['api.json']);
  const fromStdin = await run(bin.pathname, ['report', '-', '--json'], { input });
  assert.equal(fromStdin.code, 0, fromStdin.stderr);
  const fromFile = await npmReport([paths['api.json'], '--json']);
  const strip = (text) => ({ ...JSON.parse(text), input: { ...JSON.parse(text).input, name: null } });
  assert.deepEqual(strip(fromStdin.stdout), strip(fromFile.stdout));
  const help = await run(bin.pathname, ['report', '--help']);
  assert.match(help.stdout, /^Usage: noise-filter report/);
});

test('refusals: the same words from both', async () => {
  const junk = file('junk.txt', 'hello, world\nand more\n');
  for (const args of [[junk], [join(dir, 'missing.json')], [junk, '--json', '--emit', 'sentry'], [paths['api.json'], '--emit', 'patterns'], []]) {
    const [n, r] = await Promise.all([npmReport(args), rustReport(args)]);
    assert.notEqual(n.code, 0, args.join(' '));
    assert.notEqual(r.code, 0, args.join(' '));
    // The core's words are the same; an OS error's are each runtime's, and
    // progress lines (a slow machine's) are not compared.
    const core = (text) =>
      text
        .split('\n')
        .filter((line) => !line.startsWith('read '))
        .join('\n')
        .replace(/ \(os error \d+\)/, '')
        .trim();
    assert.equal(core(n.stderr), core(r.stderr), args.join(' '));
  }
});

test('--url: one GET of the list, the key sent, nothing of the export', async () => {
  const requests = [];
  const body = JSON.stringify({
    version: '2026-12-01',
    patterns: [{ id: 'custom-1', pattern: 'Cannot read properties', type: 'string', category: 'custom', confidence: 1, source: 'test' }],
  });
  const server = createServer((request, response) => {
    let received = '';
    request.on('data', (d) => (received += d));
    request.on('end', () => {
      requests.push({ method: request.method, url: request.url, auth: request.headers.authorization, received });
      if (request.headers.authorization !== 'Bearer nf_test') {
        response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"Invalid API key"}');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  try {
    const out = await npmReport([paths['api.json'], '--url', base, '--json'], { env: { NOISE_FILTER_KEY: 'nf_test' } });
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(requests, [{ method: 'GET', url: '/v1/filters?minConfidence=0.5', auth: 'Bearer nf_test', received: '' }]);
    const report = JSON.parse(out.stdout);
    assert.equal(report.patterns.source, 'url');
    assert.equal(report.patterns.count, 1);
    assert.ok(report.matched[0].events > 0);
    assert.ok(!out.stdout.includes('nf_test'));
    const [n, r] = await Promise.all([
      npmReport([paths['api.json'], '--url', base, '--key', 'nf_wrong']),
      rustReport([paths['api.json'], '--url', base, '--key', 'nf_wrong']),
    ]);
    assert.equal(n.stderr, `error: GET ${base}/v1/filters?minConfidence=0.5 answered 401: Invalid API key\n`);
    assert.equal(n.stderr, r.stderr);
  } finally {
    server.close();
  }
});
