// `noise-filter/matcher` (its top-level await loads the wasm) imported by an
// app's module: whether the wasm loads or not, the module goes on. What the
// module saw goes to `window.__tla` for pages.test.mjs.
import { Matcher, init } from 'noise-filter/matcher';

const seen = { started: true };
try {
  await init();
  seen.init = 'loaded';
  seen.noise = Matcher.builtin().isNoise('TypeError: Cannot redefine property: ethereum');
} catch (error) {
  seen.init = `${error?.name}: ${error?.message}`;
  try {
    Matcher.builtin();
  } catch (refused) {
    seen.builtin = refused.message;
  }
}
document.getElementById('out').textContent = JSON.stringify(seen);
window.__tla = seen;
