// The named checks of a test page, run in order, published for
// browser.test.mjs as `window.__results` and shown on the page.
export const results = [];

export async function check(name, fn) {
  try {
    await fn();
    results.push({ name, ok: true });
  } catch (error) {
    results.push({ name, ok: false, error: String(error?.stack ?? error) });
  }
}

export function publish() {
  document.getElementById('out').textContent = results.map((r) => `${r.ok ? 'ok' : 'FAIL'} ${r.name}`).join('\n');
  window.__results = results;
}
