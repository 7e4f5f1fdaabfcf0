// `npm pack` / `npm publish` run this first (the `prepack` script): it
// refuses to pack a package whose built files are missing, so a publish
// from a fresh checkout cannot ship a package without its code.
//
//   node scripts/prepack.cjs          check; exit 1 naming what is missing
//   node scripts/prepack.cjs --list   print every file the package must hold
//
// The list is read from package.json itself: every file its `exports`,
// `types`, `sideEffects` and `bin` name, every module those import (relative
// `import`/`export ... from` and `new URL('./…', import.meta.url)`, followed
// through the built files), plus the README, LICENSE and CHANGELOG.
// `cargo xtask npm test` compares it with what `npm pack` packed.
"use strict";
const fs = require("fs");
const path = require("path");

const root = path.join(__dirname, "..");
const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));

function targets(value, out) {
  if (typeof value === "string") out.add(value.replace(/^\.\//, ""));
  else if (Array.isArray(value)) value.forEach((v) => targets(v, out));
  else if (value && typeof value === "object") Object.values(value).forEach((v) => targets(v, out));
  return out;
}

const required = targets([manifest.exports, manifest.types, manifest.sideEffects, manifest.bin], new Set());
for (const file of ["README.md", "LICENSE", "CHANGELOG.md", "package.json"]) required.add(file);

// What a built module loads by a relative path.
const RELATIVE = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|new URL\(\s*)['"](\.\/[^'"]+)['"]/g;
const queue = [...required].filter((f) => f.endsWith(".js"));
while (queue.length > 0) {
  const file = queue.pop();
  const full = path.join(root, file);
  if (!fs.existsSync(full)) continue;
  for (const [, rel] of fs.readFileSync(full, "utf8").matchAll(RELATIVE)) {
    const target = path.posix.join(path.posix.dirname(file), rel);
    if (!required.has(target)) {
      required.add(target);
      if (target.endsWith(".js")) queue.push(target);
    }
  }
}
const files = [...required].sort();

if (process.argv.includes("--list")) {
  process.stdout.write(files.join("\n") + "\n");
} else {
  const missing = files.filter((f) => !fs.existsSync(path.join(root, f)));
  if (missing.length > 0) {
    process.stderr.write(
      `noise-filter: not packing, ${missing.length} file(s) missing: ${missing.join(", ")}\n` +
        "Build the package first: `cargo xtask npm` (or `npm run build`) from the repository.\n",
    );
    process.exit(1);
  }
}
