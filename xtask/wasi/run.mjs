// Runs a wasm32-wasip1 test binary under Node's WASI: cargo's runner for
// `cargo test --target wasm32-wasip1` (set by `cargo xtask wasm-test`), so the
// core's own tests run as real wasm in a real runtime.
//
// The test binary runs in a child Node process. Node 20 sometimes dies of
// SIGSEGV after a test binary has finished (seen on the matcher tests, about
// one run in ten, with all tests passed and `exit`, `exitCode` and
// `--no-wasm-tier-up` alike). Wasm cannot crash its host, so a death by a
// signal is the runtime's, never a test's verdict: such a run is said and
// repeated (twice at most). A failed test exits with a status, which is
// passed on as it is.
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { argv, execPath, exit, stderr } from "node:process";
import { WASI } from "node:wasi";

const CHILD = "--run-in-this-process";

if (argv[2] === CHILD) {
  const [file, ...args] = argv.slice(3);
  const wasi = new WASI({ version: "preview1", args: [file, ...args], env: {}, preopens: {}, returnOnExit: true });
  const module = await WebAssembly.compile(await readFile(file));
  const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
  exit(wasi.start(instance));
} else {
  const self = new URL(import.meta.url).pathname;
  for (let attempt = 1; ; attempt++) {
    const run = spawnSync(execPath, ["--no-warnings", self, CHILD, ...argv.slice(2)], { stdio: "inherit" });
    if (run.signal === null) exit(run.status ?? 1);
    if (attempt === 3) {
      stderr.write(`run.mjs: Node died of ${run.signal} ${attempt} times running ${argv[2]}\n`);
      exit(1);
    }
    stderr.write(`run.mjs: Node died of ${run.signal} running ${argv[2]} (a runtime crash, not a test result); running it again\n`);
  }
}
