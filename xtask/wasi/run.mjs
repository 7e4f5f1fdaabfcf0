// Runs a wasm32-wasip1 test binary under Node's WASI: cargo's runner for
// `cargo test --target wasm32-wasip1` (set by `cargo xtask wasm-test`), so the
// core's own tests run as real wasm in a real runtime.
import { readFile } from "node:fs/promises";
import { argv, exit } from "node:process";
import { WASI } from "node:wasi";

const [file, ...args] = argv.slice(2);
const wasi = new WASI({ version: "preview1", args: [file, ...args], env: {}, preopens: {}, returnOnExit: true });
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
exit(wasi.start(instance));
