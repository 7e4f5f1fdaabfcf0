// Prints the wasm's raw and gzip sizes before and after wasm-opt and writes
// them to a JSON file: `node sizes.cjs <before.wasm> <after.wasm> <out.json>`
// (called by `cargo xtask npm`).
const { readFileSync, writeFileSync } = require('node:fs');
const { gzipSync } = require('node:zlib');

const [before, after, out] = process.argv.slice(2);
const size = (file) => {
  const bytes = readFileSync(file);
  return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
};
const sizes = { wasmBindgen: size(before), wasmOpt: size(after) };
writeFileSync(out, `${JSON.stringify(sizes, null, 1)}\n`);
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(
  `noise_filter_bg.wasm: ${kb(sizes.wasmOpt.raw)} raw, ${kb(sizes.wasmOpt.gzip)} gzip ` +
    `(before wasm-opt: ${kb(sizes.wasmBindgen.raw)} raw, ${kb(sizes.wasmBindgen.gzip)} gzip)`,
);
