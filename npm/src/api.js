// The package's API over the wasm binding (`glue.js`, made by wasm-bindgen
// from the crate `noise-filter-wasm`). Every decision is the core's: this
// file only moves values between JavaScript and the binding, awaits the
// stores, and reads JavaScript errors into events. Each runtime's entry
// (node.js, deno.js, browser.js, workerd.js) loads the wasm, then re-exports
// this module. Types: index.d.ts.

import * as wasm from './glue.js';

const encoder = new TextEncoder();
/** The wasm module's memory (WebAssembly.Memory), once loaded. */
let memory;

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

function randomBytes() {
  return globalThis.crypto.getRandomValues(new Uint8Array(24));
}

/** Creates an API key for `account`; stores its record; returns the key. */
export async function createKey(store, { account, label = '', now = Date.now(), random = randomBytes() }) {
  const [key, storeKey, record] = wasm.newKey(random, account, label, now);
  await store.set(storeKey, record);
  return key;
}

/** Revokes `key`; false when the store does not know it. */
export async function revokeKey(store, key, { now = Date.now() } = {}) {
  const storeKey = wasm.keyStoreKey(key);
  const record = text(await store.get(storeKey));
  if (record === undefined) return false;
  await store.set(storeKey, wasm.revokeKeyRecord(record, now));
  return true;
}

/**
 * Adds custom patterns to an account, all or none; returns their ids.
 * Throws the core's explanation when one is refused (nothing is stored).
 */
export async function addCustomPatterns(store, account, patterns, { now = Date.now() } = {}) {
  const storeKey = wasm.customPatternsKey(account);
  const current = text(await store.get(storeKey));
  const [document, ...ids] = wasm.addCustomPatterns(current, patterns, now);
  await store.set(storeKey, document);
  return ids;
}

/** Removes an account's custom pattern; false when it had no such id. */
export async function removeCustomPattern(store, account, id, { now = Date.now() } = {}) {
  const storeKey = wasm.customPatternsKey(account);
  const document = wasm.removeCustomPattern(text(await store.get(storeKey)), id, now);
  if (document === undefined) return false;
  await store.set(storeKey, document);
  return true;
}

/** An account's custom patterns, as Variant A lists them. */
export async function listCustomPatterns(store, account) {
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

const FIELDS = ['message', 'userAgent'];
const FRAME = 2;
const CLEAN = Object.freeze({ noise: false, matches: Object.freeze([]) });
/** What `classify` answers when the frames must cross one by one. */
const APART = 0xffffffff;

/** The patterns of a compiled set, applied to error events. */
export class Matcher {
  #raw;
  #table;
  /** The wasm-side input buffer: address, capacity, a view of it. */
  #input = 0;
  #capacity = 0;
  #view;

  /** Use `Matcher.builtin`, `Matcher.fromResponse` or `Matcher.fromPatterns`. */
  constructor(raw) {
    if (!(raw instanceof wasm.Matcher)) throw new TypeError('use Matcher.builtin, fromResponse or fromPatterns');
    this.#raw = raw;
  }

  /** The built-in catalog at or above `minConfidence` (default 0.5, as the service). */
  static builtin({ minConfidence = 0.5 } = {}) {
    return new Matcher(wasm.Matcher.builtin(minConfidence));
  }

  /** The patterns of a Variant A or B response body (text, bytes or parsed JSON). */
  static fromResponse(body) {
    let json;
    if (typeof body === 'string') json = body;
    else if (body instanceof Uint8Array || body instanceof ArrayBuffer) json = new TextDecoder().decode(body);
    else json = JSON.stringify(body);
    return new Matcher(wasm.Matcher.fromResponse(json));
  }

  /** Patterns given as `{id, pattern, type?, category?, confidence?}`. */
  static fromPatterns(patterns) {
    return new Matcher(wasm.Matcher.fromPatterns(patterns));
  }

  /** A new matcher with these patterns added after this one's. */
  withPatterns(patterns) {
    return new Matcher(this.#raw.withPatterns(patterns));
  }

  /** The patterns, in order. */
  get patterns() {
    return this.#raw.patterns();
  }

  /** Which patterns match which text of the event. */
  classify(input) {
    if (this.#run(input) === 0) return CLEAN;
    const flat = this.#raw.matches();
    const table = (this.#table ??= this.#raw.patterns());
    const matches = [];
    for (let i = 0; i < flat.length; i += 2) {
      const { id, category, confidence } = table[flat[i]];
      const code = flat[i + 1];
      matches.push(
        code < FRAME
          ? { id, category, confidence, field: FIELDS[code] }
          : { id, category, confidence, field: 'frame', index: code - FRAME },
      );
    }
    return { noise: true, matches };
  }

  /** Whether any pattern matches the event. */
  isNoise(input) {
    return this.#run(input, true) > 0;
  }

  /** Frees the wasm memory now rather than when the matcher is collected. */
  free() {
    this.#raw.free();
  }

  /** A view of at least `bytes` bytes of the wasm input buffer. */
  #buffer(bytes) {
    if (bytes > this.#capacity) {
      this.#capacity = Math.max(bytes, 4096);
      this.#input = this.#raw.inputBuffer(this.#capacity);
      this.#view = undefined;
    }
    // Growing the wasm memory detaches the old views.
    if (this.#view === undefined || this.#view.byteLength === 0) {
      this.#view = new Uint8Array((memory ??= wasm.wasmMemory()).buffer, this.#input, this.#capacity);
    }
    return this.#view;
  }

  /**
   * Classifies in wasm; returns the number of matches, or with `any` only
   * whether there is one (1 or 0: wasm stops at the first and keeps none).
   */
  #run(input, any = false) {
    let type;
    let message;
    let frames;
    let userAgent;
    if (typeof input === 'string') {
      message = input;
    } else {
      ({ type, message, frames, userAgent } = toEvent(input));
    }
    // One string across the boundary, encoded by TextEncoder.encodeInto
    // straight into the matcher's wasm buffer: the texts back to back, cut
    // again in wasm by their lengths; frame URLs joined by newlines (a frame
    // holding a newline itself makes the count disagree: then they go apart).
    const count = frames === undefined ? 0 : frames.length;
    const joined = count === 0 ? undefined : count === 1 ? String(frames[0] ?? '') : frames.join('\n');
    const text = (type ?? '') + (message ?? '') + (joined ?? '') + (userAgent ?? '');
    const written = encoder.encodeInto(text, this.#buffer(text.length * 3)).written;
    const typeLength = type === undefined ? -1 : type.length;
    const messageLength = message === undefined ? -1 : message.length;
    const framesLength = joined === undefined ? -1 : joined.length;
    const found = any
      ? this.#raw.isNoiseInput(written, typeLength, messageLength, framesLength, count, userAgent !== undefined)
      : this.#raw.classifyInput(written, typeLength, messageLength, framesLength, count, userAgent !== undefined);
    if (found !== APART) return found;
    return this.#raw.classifyFrames(type, message, (frames ?? []).map(String), userAgent);
  }
}

/**
 * Reads what the caller has into an event `{type, message, frames, userAgent}`:
 * an `Error` (name, message, stack), a message string, a Sentry-style event,
 * or `{message, type?, stack?, frames?, url?, userAgent?}`.
 */
export function toEvent(input) {
  if (typeof input === 'string') return { message: input };
  if (input === null || typeof input !== 'object') return { message: input === undefined ? undefined : String(input) };
  if (input instanceof Error) {
    return { type: input.name, message: input.message, frames: parseStack(input.stack) };
  }
  if (Array.isArray(input.exception?.values)) return fromSentryEvent(input);
  let frames = Array.isArray(input.frames) ? input.frames : parseStack(input.stack);
  if (typeof input.url === 'string' && input.url !== '' && !frames.includes(input.url)) frames = [input.url, ...frames];
  return {
    type: optionalString(input.type),
    message: optionalString(input.message),
    frames,
    userAgent: optionalString(input.userAgent),
  };
}

function optionalString(value) {
  return value === undefined || value === null ? undefined : String(value);
}

/** The thrown exception of a Sentry event (the last of `exception.values`). */
function fromSentryEvent(event) {
  const values = event.exception.values;
  const thrown = values[values.length - 1] ?? {};
  const frames = [];
  for (const frame of thrown.stacktrace?.frames ?? []) {
    const url = frame.abs_path ?? frame.filename;
    if (typeof url === 'string' && url !== '') frames.push(url);
  }
  const headers = event.request?.headers ?? {};
  const userAgent = headers['User-Agent'] ?? headers['user-agent'];
  return {
    type: optionalString(thrown.type),
    message: optionalString(thrown.value ?? event.message?.formatted ?? event.message),
    frames,
    userAgent: optionalString(userAgent),
  };
}

const LINE_COLUMN = /(?::\d+){1,2}$/;
const V8_FRAME = /^\s*at (.*?)\s*$/;

/**
 * The script URLs of a JavaScript stack trace (V8, SpiderMonkey and
 * JavaScriptCore formats), line and column cut off, in stack order.
 */
export function parseStack(stack) {
  const frames = [];
  if (typeof stack !== 'string') return frames;
  const lines = stack.split('\n');
  // V8 writes `    at fn (url:line:col)`; the message lines before may hold
  // anything, `@` included, so in a V8 stack only `at` lines are frames.
  const v8 = lines.some((line) => V8_FRAME.test(line));
  for (const line of lines) {
    let location;
    if (v8) {
      const frame = V8_FRAME.exec(line);
      if (frame === null) continue;
      const rest = frame[1];
      const open = rest.indexOf(' (');
      location = rest.endsWith(')') && open !== -1 ? rest.slice(open + 2, -1) : rest;
      if (location.startsWith('eval at ')) {
        const inner = /\(([^()]+?)\)/.exec(location);
        location = inner === null ? '' : inner[1];
      }
    } else {
      // SpiderMonkey and JavaScriptCore: `fn@url:line:col`.
      const at = line.indexOf('@');
      if (at === -1) continue;
      location = line.slice(at + 1).trim();
    }
    location = location.replace(LINE_COLUMN, '');
    if (location === '' || location === 'native' || location === '[native code]' || location === '<anonymous>') continue;
    frames.push(location);
  }
  return frames;
}

/**
 * A `beforeSend`-style hook: returns `null` for an event the matcher calls
 * noise (so the SDK drops it), the event otherwise.
 */
export function createBeforeSend(matcher, { onNoise } = {}) {
  return function beforeSend(event, hint) {
    const verdict = matcher.classify(event);
    if (!verdict.noise) return event;
    onNoise?.(verdict, event, hint);
    return null;
  };
}
