import { MemoryStore, createHandler } from 'noise-filter';

// `deno serve serve.mjs`, `bun serve.mjs`: both serve a default export's fetch.
// In a Cloudflare Worker, pass stores backed by KV or a Durable Object instead.
const store = new MemoryStore();

export default { fetch: createHandler({ keys: store, customPatterns: store }) };
