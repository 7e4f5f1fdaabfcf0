#!/usr/bin/env node
// `npx noise-filter report`: the noise report over an export, as the core
// decides it (the main entry's wasm, `ReportPlan` and `Report`; the Rust
// binary's `noise-filter report` is the same core, and the tests compare
// the two byte for byte). This file only moves bytes: it reads the file or
// standard input (gunzipping gzip), fetches the pattern list for `--url`
// (one GET, nothing else sent), shows progress on stderr and writes what
// the core renders.
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import './node.js';
import { ReportPlan, reportFetchRefusal } from './glue.js';

/** Bytes read at a time, as the Rust binary reads them. */
const CHUNK = 256 * 1024;
/** The largest pattern list read. */
const MAX_LIST_BYTES = 64 * 1024 * 1024;
/** How long `--url` may take. */
const FETCH_DEADLINE_MS = 30_000;
/** Progress is shown once reading has taken this long. */
const PROGRESS_AFTER_MS = 1000;

class Failure extends Error {}

async function main(argv) {
  const [command, ...args] = argv;
  if (command !== 'report') {
    process.stdout.write(
      'Usage: noise-filter report [OPTIONS] FILE (noise-filter report --help)\n' +
        'The server and the key and pattern commands are the Rust binary\'s `noise-filter`.\n',
    );
    return command === undefined || command === '--help' || command === '-h' ? 0 : 1;
  }
  const plan = new ReportPlan(args, process.env.NOISE_FILTER_KEY);
  if (plan.help) {
    process.stdout.write(ReportPlan.usage());
    return 0;
  }
  let list;
  if (plan.listKind === 'file') list = readList(plan.listLocation);
  else if (plan.listKind === 'url') list = await fetchList(plan.listLocation, plan.key);
  const report = plan.start(list);
  try {
    await readAll(await open(plan.input), report);
    report.finish();
    if (plan.html !== undefined) {
      try {
        writeFileSync(plan.html, report.html());
      } catch (error) {
        throw new Failure(`cannot write ${plan.html}: ${error.message}`);
      }
    }
    const out = { summary: () => report.text(), json: () => report.json(), patterns: () => report.emitPatterns(), sentry: () => report.emitSentry() }[plan.stdout]();
    await write(out);
  } finally {
    report.free();
    plan.free();
  }
  return 0;
}

function readList(path) {
  let bytes;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new Failure(`cannot read ${path}: ${error.message}`);
  }
  if (bytes.length > MAX_LIST_BYTES) throw new Failure(`${path} is over 64 MiB: not a pattern list`);
  return bytes;
}

async function fetchList(url, key) {
  let response;
  try {
    response = await fetch(url, {
      headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
      signal: AbortSignal.timeout(FETCH_DEADLINE_MS),
    });
  } catch (error) {
    throw new Failure(`GET ${url}: ${error.cause?.message ?? error.message}`);
  }
  const body = new Uint8Array(await response.arrayBuffer());
  if (response.status !== 200) throw new Failure(reportFetchRefusal(url, response.status, body));
  return body;
}

/** The export as a stream of chunks, gunzipped when it starts with gzip's magic bytes. */
async function open(path) {
  const raw = path === '-' ? process.stdin : createReadStream(path, { highWaterMark: CHUNK });
  const chunks = raw[Symbol.asyncIterator]();
  let first;
  try {
    first = await chunks.next();
  } catch (error) {
    throw new Failure(`cannot read ${path}: ${error.code === 'ENOENT' ? 'No such file or directory' : error.message}`);
  }
  async function* whole() {
    if (!first.done) yield first.value;
    for (;;) {
      const next = await chunks.next();
      if (next.done) return;
      yield next.value;
    }
  }
  const head = first.done ? new Uint8Array() : first.value;
  if (head[0] === 0x1f && head[1] === 0x8b) {
    // Several gzip members one after another read as one file (Node's gunzip).
    return Readable.from(whole()).pipe(createGunzip({ chunkSize: CHUNK }));
  }
  return whole();
}

async function readAll(stream, report) {
  const started = Date.now();
  const terminal = process.stderr.isTTY === true;
  // On a terminal the line is redrawn twice a second; in a log a line every 10 s.
  const every = terminal ? 500 : 10_000;
  let shown;
  try {
    for await (const chunk of stream) {
      for (let at = 0; at < chunk.length; at += CHUNK) report.feed(chunk.subarray(at, at + CHUNK));
      const now = Date.now();
      if (now - started >= PROGRESS_AFTER_MS && (shown === undefined || now - shown >= every)) {
        shown = now;
        progress(report, now - started, terminal, false);
      }
    }
  } catch (error) {
    if (error instanceof Error && error.code !== undefined) throw new Failure(`cannot read the export: ${error.message}`);
    throw error;
  }
  if (shown !== undefined) progress(report, Date.now() - started, terminal, true);
}

function progress(report, elapsed, terminal, last) {
  const line = `read ${(report.bytes() / 1e6).toFixed(1)} MB, ${report.events()} events in ${(elapsed / 1000).toFixed(0)} s`;
  process.stderr.write(terminal ? `\r${line}${last ? '\n' : ''}` : `${line}\n`);
}

function write(text) {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => {
      // A reader that stopped early (`| head`) is no failure.
      if (error && error.code !== 'EPIPE') reject(new Failure(`cannot write to standard output: ${error.message}`));
      else resolve();
    });
  });
}

process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    // The core's refusals come as `Error`s of the glue; the shell's as Failure.
    process.stderr.write(`error: ${error.message}\n`);
    process.exitCode = 1;
  },
);
