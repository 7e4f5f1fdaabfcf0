// A service worker serving the endpoint with the package: top-level await is
// not allowed here, so it imports `noise-filter/init` and awaits `init()`.
import { Matcher, MemoryStore, createHandler, createKey, init } from 'noise-filter/init';

const ready = init();
const store = new MemoryStore();
const handle = createHandler({ keys: store, customPatterns: store });
let key;

self.addEventListener('install', (event) => event.waitUntil(self.skipWaiting()));
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  const { pathname } = new URL(event.request.url);
  if (!/^\/(v1|api\/v1|sw)\//.test(pathname)) return;
  event.respondWith(
    (async () => {
      await ready;
      key ??= await createKey(store, { account: 'sw' });
      if (pathname === '/sw/key') return new Response(key);
      if (pathname === '/sw/classify') {
        return Response.json(Matcher.builtin().classify({ message: 'x', frames: ['chrome-extension://abcdefghijklmnop/c.js'] }));
      }
      return handle(event.request);
    })(),
  );
});
