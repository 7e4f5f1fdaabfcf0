// Builds bundlers/page.js with webpack 5, esbuild and Rollup into
// `<outDir>/<bundler>/` (page.html, page.js and whatever each emits), as a
// user's configuration would: nothing noise-filter-specific beyond what the
// package README says each needs.
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as esbuild } from 'esbuild';
import { rollup } from 'rollup';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import webpack from 'webpack';

const here = fileURLToPath(new URL('.', import.meta.url));
const entry = join(here, 'page.js');
const wasm = fileURLToPath(import.meta.resolve('noise-filter/noise_filter_matcher_bg.wasm'));

export async function buildAll(outDir) {
  const built = {};
  for (const [name, build] of Object.entries({ webpack: withWebpack, esbuild: withEsbuild, rollup: withRollup })) {
    const dir = join(outDir, name);
    await mkdir(dir, { recursive: true });
    await build(dir);
    await copyFile(join(here, 'page.html'), join(dir, 'page.html'));
    built[name] = dir;
  }
  return built;
}

// webpack 5 turns `new URL('./x.wasm', import.meta.url)` into an emitted asset.
async function withWebpack(dir) {
  const stats = await new Promise((resolve, reject) =>
    webpack(
      {
        mode: 'production',
        entry,
        output: { path: dir, filename: 'page.js', module: true, chunkFormat: 'module' },
        experiments: { outputModule: true, topLevelAwait: true },
        resolve: { conditionNames: ['browser', 'import', 'default'] },
        performance: { hints: false },
        target: 'web',
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    ),
  );
  if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }));
}

// esbuild leaves `new URL('./x.wasm', import.meta.url)` as it is: the wasm
// is copied next to the bundle (the README says so).
async function withEsbuild(dir) {
  await esbuild({ entryPoints: [entry], outfile: join(dir, 'page.js'), bundle: true, format: 'esm', conditions: ['browser'], logLevel: 'warning' });
  await copyFile(wasm, join(dir, 'noise_filter_matcher_bg.wasm'));
}

// Rollup with node-resolve (browser condition) leaves the URL too: the same copy.
async function withRollup(dir) {
  const bundle = await rollup({ input: entry, plugins: [nodeResolve({ browser: true, exportConditions: ['browser'] })], logLevel: 'warn' });
  await bundle.write({ file: join(dir, 'page.js'), format: 'es' });
  await bundle.close();
  await copyFile(wasm, join(dir, 'noise_filter_matcher_bg.wasm'));
}
