// The package's API over the wasm binding (`glue.js`, made by wasm-bindgen
// from the crate `noise-filter-wasm`). Every decision is the core's: this
// file only moves values between JavaScript and the binding, awaits the
// stores, and reads JavaScript errors into events. Each runtime's entry
// (node.js, deno.js, browser.js, workerd.js) loads the wasm, then re-exports
// this module. The matcher is matching.js's, over this glue. Types: index.d.ts.

import * as wasm from './glue.js';
import { loadingOf } from './loading.js';
import { matcherClass } from './matching.js';

import { clientFor } from './client.js';
export { DEFAULT_HOLD_MS, createBeforeSend, noiseFilterIntegration, parseStack, toEvent } from './matching.js';
export { bugsnagOnError, datadogBeforeSend, honeybadgerBeforeNotify, posthogBeforeSend, rollbarCheckIgnore } from './trackers.js';

const encoder = new TextEncoder();
/** Whether the wasm is there: every call into it says so first (loading.js). */
const loading = loadingOf(wasm);

// ---------------------------------------------------------------- stores --

/**
 * Keys, custom patterns and counters in one process's memory. Records are
 * kept as the service stores them (text); counters as numbers.
 */
export class MemoryStore {
  #values = new Map();

  async get(key) {
    return this.#values.get(key) ?? null;
  }

  async set(key, value) {
    this.#values.set(key, value);
  }

  async delete(key) {
    this.#values.delete(key);
  }

  async increment(key, delta) {
    const value = this.#values.get(key);
    const next = (typeof value === 'number' ? value : 0) + delta;
    this.#values.set(key, next);
    return next;
  }

  /** Every key held, in insertion order. */
  keys() {
    return [...this.#values.keys()];
  }
}

/** As many random bytes as a key takes (the core's count). */
function randomBytes() {
  loading.check();
  return globalThis.crypto.getRandomValues(new Uint8Array(wasm.keyRandomBytes()));
}

// The admin helpers below work on a store this process holds (the records
// the service reads), never on a deployment: one whose store is out of
// reach is administered through its admin API (`/admin/v1/`), which the
// core answers (docs/SERVING.md, "The admin API").

/** Creates an API key for `account`; stores its record; returns the key. */
export async function createKey(store, { account, label = '', now = Date.now(), random = randomBytes() }) {
  loading.check();
  const [key, storeKey, record] = wasm.newKey(random, account, label, now);
  await store.set(storeKey, record);
  return key;
}

/** Revokes `key`; false when the store does not know it. */
export async function revokeKey(store, key, { now = Date.now() } = {}) {
  loading.check();
  const storeKey = wasm.keyStoreKey(key);
  if (storeKey === undefined) return false;
  const revoked = wasm.revokeKeyRecord(text(await store.get(storeKey)), now);
  if (revoked === undefined) return false;
  await store.set(storeKey, revoked);
  return true;
}

/**
 * Adds custom patterns to an account, all or none; returns their ids.
 * Throws the core's explanation when one is refused (nothing is stored).
 */
export async function addCustomPatterns(store, account, patterns, { now = Date.now() } = {}) {
  loading.check();
  const storeKey = wasm.customPatternsKey(account);
  const current = text(await store.get(storeKey));
  const [document, ...ids] = wasm.addCustomPatterns(current, patterns, now);
  await store.set(storeKey, document);
  return ids;
}

/** Removes an account's custom pattern; false when it had no such id. */
export async function removeCustomPattern(store, account, id, { now = Date.now() } = {}) {
  loading.check();
  const storeKey = wasm.customPatternsKey(account);
  const document = wasm.removeCustomPattern(text(await store.get(storeKey)), id, now);
  if (document === undefined) return false;
  await store.set(storeKey, document);
  return true;
}

/** An account's custom patterns, as Variant A lists them. */
export async function listCustomPatterns(store, account) {
  loading.check();
  const storeKey = wasm.customPatternsKey(account);
  return wasm.listCustomPatterns(text(await store.get(storeKey)));
}

/** A stored value as text (`undefined`: absent). */
function text(value) {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value;
  return new TextDecoder().decode(value);
}

/** A stored value as the bytes the core reads (`undefined`: absent). */
function bytes(value) {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return encoder.encode(value);
  // A counter read back: the core reads decimal text.
  if (typeof value === 'number' || typeof value === 'bigint') return encoder.encode(String(value));
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError('a store returned a value that is not a string, a number or bytes');
}

// --------------------------------------------------------------- handler --

/**
 * The service as a fetch handler: `(Request) => Promise<Response>`, with the
 * same answers, byte for byte, as the Spin component.
 */
export function createHandler({ keys, customPatterns, rateLimitStore = new MemoryStore(), clock = Date.now } = {}) {
  const stores = { keys, customPatterns, rateLimitStore };
  for (const [name, store] of Object.entries(stores)) {
    if (typeof store?.get !== 'function') throw new TypeError(`createHandler: ${name} needs a get(key) method`);
  }
  if (typeof rateLimitStore.increment !== 'function' || typeof rateLimitStore.delete !== 'function') {
    throw new TypeError('createHandler: rateLimitStore needs get, increment and delete methods');
  }
  return async function handle(request) {
    loading.check();
    const url = new URL(request.url);
    const headers = [];
    for (const [name, value] of request.headers) headers.push(name, value);
    const exchange = new wasm.Exchange(request.method, url.pathname + url.search, headers, clock());
    try {
      for (;;) {
        const action = exchange.action;
        if (action === 'respond') return response(exchange);
        const store = stores[exchange.store];
        const key = exchange.key;
        let outcome;
        try {
          if (action === 'get') {
            outcome = bytes(await store.get(key));
          } else if (action === 'increment') {
            outcome = Number(await store.increment(key, exchange.delta));
            if (!Number.isSafeInteger(outcome)) throw new TypeError('increment did not return an integer');
          } else {
            await store.delete(key);
          }
        } catch {
          // The store failed: the core answers 503 and writes nothing more.
          exchange.fail();
          continue;
        }
        if (action === 'get') exchange.resumeGet(outcome);
        else if (action === 'increment') exchange.resumeIncrement(outcome);
        else exchange.resumeDelete();
      }
    } finally {
      exchange.free();
    }
  };
}

function response(exchange) {
  const flat = exchange.headers;
  const headers = [];
  for (let i = 0; i < flat.length; i += 2) headers.push([flat[i], flat[i + 1]]);
  const body = exchange.body;
  return new Response(body.length > 0 ? body : null, { status: exchange.status, headers });
}

// --------------------------------------------------------------- matcher --

/** The patterns of a compiled set, applied to error events (matching.js). */
export const Matcher = matcherClass(wasm);

/** A consumer of a running service (client.js), over this entry's matcher. */
export const createClient = clientFor(Matcher, loading);
