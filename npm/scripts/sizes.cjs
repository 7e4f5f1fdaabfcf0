// Prints each wasm's raw, gzip and brotli sizes before and after wasm-opt and
// writes them to a JSON file (called by `cargo xtask npm`):
// `node sizes.cjs <out.json> <name> <before.wasm> <after.wasm> [<name> <before> <after>]…`
// gzip is Node's zlib at level 9, brotli at quality 11.
const { readFileSync, writeFileSync } = require('node:fs');
const { brotliCompressSync, constants, gzipSync } = require('node:zlib');

const [out, ...rest] = process.argv.slice(2);
const size = (file) => {
  const bytes = readFileSync(file);
  const brotli = brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
  return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length, brotli: brotli.length };
};
const sizes = {};
for (let i = 0; i + 2 < rest.length; i += 3) {
  const [name, before, after] = rest.slice(i, i + 3);
  sizes[name] = { wasmBindgen: size(before), wasmOpt: size(after) };
}
writeFileSync(out, `${JSON.stringify(sizes, null, 1)}\n`);
const kb = (n) => `${n.toLocaleString('en-US')} B`;
for (const [name, { wasmBindgen, wasmOpt }] of Object.entries(sizes)) {
  console.log(
    `${name}: ${kb(wasmOpt.raw)} raw, ${kb(wasmOpt.gzip)} gzip, ${kb(wasmOpt.brotli)} brotli ` +
      `(before wasm-opt: ${kb(wasmBindgen.raw)} raw, ${kb(wasmBindgen.gzip)} gzip)`,
  );
}
