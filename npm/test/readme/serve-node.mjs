import { createServer } from 'node:http';
import { MemoryStore, addCustomPatterns, createHandler, createKey } from 'noise-filter';

// One process: keys, custom patterns and rate-limit counters in memory.
const store = new MemoryStore();
const key = await createKey(store, { account: 'acme', label: 'docs' });
await addCustomPatterns(store, 'acme', [{ pattern: 'legacy-widget.js', category: 'third-party-script' }]);

const handle = createHandler({ keys: store, customPatterns: store });

// Node's http server speaks IncomingMessage; the handler speaks fetch.
const server = createServer(async (req, res) => {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  const response = await handle(new Request(new URL(req.url ?? '/', 'http://localhost'), { method: req.method, headers }));
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
});
server.listen(Number(process.env.PORT ?? 8787), '127.0.0.1', () => {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  console.log(`listening on http://127.0.0.1:${port}`);
  console.log(`API key: ${key}`);
});
