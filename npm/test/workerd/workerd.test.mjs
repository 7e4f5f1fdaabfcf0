// The shared cases inside workerd, the runtime of Cloudflare Workers (npm
// package `workerd`). The worker is bundled as Wrangler would bundle it:
// esbuild with the `workerd` condition, the `.wasm` import kept as a wasm
// module of the worker. One node:test per case.
import { test } from 'node:test';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const out = fileURLToPath(new URL('../../pkg/workerd/', import.meta.url));
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [fileURLToPath(new URL('worker.js', import.meta.url))],
  outfile: `${out}worker.js`,
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  conditions: ['workerd', 'worker'],
  external: ['*.wasm'],
  logLevel: 'warning',
});
for (const wasm of ['noise_filter_bg.wasm', 'noise_filter_matcher_bg.wasm']) {
  copyFileSync(fileURLToPath(import.meta.resolve(`noise-filter/${wasm}`)), `${out}${wasm}`);
}
writeFileSync(
  `${out}config.capnp`,
  `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:8080", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "noise_filter_bg.wasm", wasm = embed "noise_filter_bg.wasm"),
    (name = "noise_filter_matcher_bg.wasm", wasm = embed "noise_filter_matcher_bg.wasm"),
  ],
  compatibilityDate = "2025-11-01",
);
`,
);

const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});
const bin = fileURLToPath(new URL('../node_modules/.bin/workerd', import.meta.url));
const workerd = spawn(bin, ['serve', `${out}config.capnp`, '--socket-addr', `http=127.0.0.1:${port}`], { stdio: ['ignore', 'inherit', 'inherit'] });
let results;
try {
  for (let attempt = 0; attempt < 200 && results === undefined; attempt++) {
    try {
      results = await (await fetch(`http://127.0.0.1:${port}/`)).json();
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
} finally {
  workerd.kill();
}

test('workerd serves the worker bundled with the package', () => {
  if (!Array.isArray(results)) throw new Error('workerd did not answer');
});
for (const { name, ok, error } of results ?? []) {
  test(`workerd: ${name}`, () => {
    if (!ok) throw new Error(error);
  });
}
