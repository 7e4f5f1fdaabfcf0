// The host binary (`noise-filter`) as the suites that run it for real use
// it: its admin CLI on a store folder, `serve` on a port the kernel picks,
// and a free port for a server that cannot pick its own (nginx, `spin up`).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

/** A port free now on 127.0.0.1 (for a server that must be told one). */
export function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** The admin CLI of `host` on the store in `stateDir`: `(…args) => stdout`. */
export function adminCli(host, stateDir) {
  return async (...args) => {
    const { stdout } = await promisify(execFile)(host, [...args, '--state-dir', stateDir]);
    return stdout.trim();
  };
}

/**
 * `host serve` on a port of the kernel's choosing, with `args` after it;
 * resolves once it says where it listens, with the child and its base URL.
 * `stderr`: `'pipe'` to read its log lines, `'ignore'` otherwise.
 */
export async function serveHost(host, args, { stderr = 'ignore' } = {}) {
  const child = spawn(host, ['serve', '--listen', '127.0.0.1:0', ...args], {
    stdio: ['ignore', 'pipe', stderr],
  });
  const [first] = await once(createInterface({ input: child.stdout }), 'line');
  const base = /^listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(first);
  assert.ok(base, first);
  return { child, base: base[1], port: Number(base[2]) };
}
