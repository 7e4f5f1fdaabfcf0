// The matcher's JavaScript half, one implementation for both entries of the
// package: `noise-filter` (api.js, over the main wasm) and
// `noise-filter/matcher` (matcher-api.js, over the matcher-only wasm), whose
// wasms export the same matcher. Reads errors into events, writes an event's
// texts into the wasm matcher's buffer, and turns its flat answers into
// verdicts. Pattern lists go to wasm described, not judged (`describe`): the
// core reads them, and every decision and refusal is the core's. The wire's
// codes (which text a match is of, the kinds of a described value, "the
// texts must cross apart") are the binding's enums, read from the glue: no
// number of wasm/src/lib.rs is copied here.

import { loadingOf } from './loading.js';

const encoder = new TextEncoder();
const CLEAN = Object.freeze({ noise: false, matches: Object.freeze([]) });

/**
 * The `Matcher` class of an entry, over `glue` (its wasm-bindgen module):
 * the constructors; the rest is `Classifier`'s, one class for both entries
 * (a whole class per entry, tried first, gave clean `isNoise` ~15% lower
 * ratios on a loaded machine; with one base class they match the old code's).
 */
export function matcherClass(glue) {
  const loading = loadingOf(glue);
  return class Matcher extends Classifier {
    /** Use `Matcher.builtin`, `Matcher.fromResponse` or `Matcher.fromPatterns`. */
    constructor(raw) {
      super(raw, glue);
    }

    /**
     * The built-in catalog at or above `minConfidence`; without it, the
     * core's default threshold (0.5): the built-in patterns the service
     * lists by default, as `Matcher.builtin()` holds in every language.
     */
    static builtin({ minConfidence, exclude, firstParty } = {}) {
      loading.check();
      const raw = exclude === undefined
        ? glue.Matcher.builtin(minConfidence)
        : glue.Matcher.builtinExcluding(minConfidence, ...optionLists('exclude', EXCLUDE_FIELDS, exclude));
      return new Matcher(withRule(raw, firstParty));
    }

    /**
     * The patterns of a Variant A or B response body (text, bytes or parsed
     * JSON); `firstParty`: with the "not our code" rule.
     */
    static fromResponse(body, { firstParty } = {}) {
      loading.check();
      let parsed;
      try {
        parsed = JSON.parse(responseText(body));
      } catch (error) {
        const notJson = Uint8Array.of(glue.ValueKind.NotJson);
        return new Matcher(glue.Matcher.fromResponse(notJson, [String(error.message)], new Float64Array()));
      }
      return new Matcher(withRule(glue.Matcher.fromResponse(...describe(glue.ValueKind, parsed, true)), firstParty));
    }

    /** Patterns given as `{id, pattern, type?, category?, confidence?}` (any iterable). */
    static fromPatterns(patterns) {
      loading.check();
      return new Matcher(glue.Matcher.fromPatterns(...describe(glue.ValueKind, patterns, false)));
    }
  };
}

/** Everything of `Matcher` but its constructors (see `matcherClass`). */
class Classifier {
  #raw;
  #memory;
  #table;
  /** The glue's enums: `TextCode`, `ValueKind`, `TextLength.Absent`, `Classified.TextsApart`. */
  #codes;
  #kinds;
  #absent;
  #apart;
  #tags;
  /** The first-party rule's match as the core names it: id, category, confidence. */
  #rule;
  /** The wasm-side input buffer: address, capacity, a view of it. */
  #input = 0;
  #capacity = 0;
  #view;

  /** `raw`: the binding's matcher, made by `glue`, whose memory holds the input buffer. */
  constructor(raw, glue) {
    if (!(raw instanceof glue.Matcher)) throw new TypeError('use Matcher.builtin, fromResponse or fromPatterns');
    this.#raw = raw;
    this.#memory = () => glue.wasmMemory();
    this.#codes = glue.TextCode;
    this.#kinds = glue.ValueKind;
    this.#absent = glue.TextLength.Absent;
    this.#apart = glue.Classified.TextsApart;
    let rule;
    this.#rule = () => (rule ??= [...glue.Matcher.firstPartyRule(), glue.Matcher.firstPartyConfidence()]);
  }

  /**
   * A new matcher without the patterns `exclude` names (`{ ids, categories, tags }`:
   * pattern ids, categories in either variant's spelling or `custom`).
   */
  excluding(exclude) {
    return new this.constructor(this.#raw.excluding(...optionLists('exclude', EXCLUDE_FIELDS, exclude)));
  }

  /**
   * A new matcher with the "not our code" rule: an event whose stack frames
   * are all outside `firstParty` (`{ origins, paths }`: the application's
   * origins, path prefixes) is noise, matched as `first-party-rule`.
   */
  withFirstParty(firstParty) {
    // A copy (excluding nothing), given the rule in place.
    return new this.constructor(withRule(this.#raw.excluding([], [], []), firstParty));
  }

  /** A new matcher with these patterns added after this one's. */
  withPatterns(patterns) {
    return new this.constructor(this.#raw.withPatterns(...describe(this.#kinds, patterns, false)));
  }

  /** The patterns, in order. */
  get patterns() {
    const raw = this.#raw;
    const [texts, kinds, categories, confidences] = [raw.texts(), raw.kinds(), raw.categories(), raw.confidences()];
    return raw.ids().map((id, i) => ({
      id,
      pattern: texts[i],
      type: kinds[i],
      category: categories[i],
      confidence: confidences[i],
    }));
  }

  /** Which patterns match which text of the event. */
  classify(input) {
    if (this.#run(input) === 0) return CLEAN;
    const flat = this.#raw.matches();
    const table = (this.#table ??= this.patterns);
    const { Message, Frame } = this.#codes;
    // Each pattern's tags (a built-in's sub-kinds, none for others), read once.
    const tagsOf = (this.#tags ??= this.#raw.tags().map((t) => Object.freeze(t === '' ? [] : t.split(','))));
    const matches = [];
    for (let i = 0; i < flat.length; i += 2) {
      // One past the patterns: the first-party rule's match.
      const pattern = table[flat[i]];
      const [id, category, confidence] = pattern === undefined ? this.#rule() : [pattern.id, pattern.category, pattern.confidence];
      const tags = tagsOf[flat[i]] ?? NO_TAGS;
      const code = flat[i + 1];
      matches.push(
        code < Frame
          ? { id, category, tags, confidence, field: code === Message ? 'message' : 'userAgent' }
          : { id, category, tags, confidence, field: 'frame', index: code - Frame },
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
      this.#view = new Uint8Array(this.#memory().buffer, this.#input, this.#capacity);
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
    const absent = this.#absent;
    const typeLength = type === undefined ? absent : type.length;
    const messageLength = message === undefined ? absent : message.length;
    const framesLength = joined === undefined ? absent : joined.length;
    const found = any
      ? this.#raw.isNoiseInput(written, typeLength, messageLength, framesLength, count, userAgent !== undefined)
      : this.#raw.classifyInput(written, typeLength, messageLength, framesLength, count, userAgent !== undefined);
    if (found !== this.#apart) return found;
    return this.#raw.classifyFrames(type, message, (frames ?? []).map(String), userAgent);
  }
}

const NO_TAGS = Object.freeze([]);

/** The lists an `exclude` option may have. */
const EXCLUDE_FIELDS = ['ids', 'categories', 'tags'];
/** The lists a `firstParty` option may have. */
const FIRST_PARTY_FIELDS = ['origins', 'paths'];

/**
 * `raw` (a binding's matcher, just built) given the first-party rule when
 * `firstParty` is given; refused, it is freed and the core's reason thrown.
 */
function withRule(raw, firstParty) {
  if (firstParty === undefined) return raw;
  try {
    raw.setFirstParty(...optionLists('firstParty', FIRST_PARTY_FIELDS, firstParty));
  } catch (refused) {
    raw.free();
    throw refused;
  }
  return raw;
}

/**
 * The lists of an option (`exclude`, `firstParty`) in the binding's order
 * (`fields`), as given: the core checks their words.
 */
function optionLists(option, fields, value) {
  if (value === null || typeof value !== 'object') throw new TypeError(`${option} is { ${fields.join('?, ')}? }`);
  for (const name of Object.keys(value)) {
    if (!fields.includes(name)) throw new TypeError(`${option}: unknown field \`${name}\``);
  }
  return fields.map((name) => {
    const list = value[name];
    if (list === undefined) return [];
    const items = typeof list === 'string' || typeof list?.[Symbol.iterator] !== 'function' ? undefined : [...list];
    if (items === undefined || items.some((item) => typeof item !== 'string')) throw new TypeError(`${option}: ${name} is a list of strings`);
    return items;
  });
}

const PATTERN_FIELDS = ['id', 'pattern', 'type', 'category', 'confidence'];

/**
 * A pattern list (with `response`, a body `{patterns}`) as the binding takes
 * it: each value's kind (`K`: the glue's `ValueKind`) in reading order (the
 * body, the list, each item and an object item's fields), its strings and
 * numbers apart. Type conversion only: the core reads it and words every
 * refusal.
 */
function describe(K, value, response) {
  const kinds = [];
  const texts = [];
  const numbers = [];
  const put = (v) => {
    let kind = K.Other;
    const type = typeof v;
    if (type === 'string') {
      kind = K.String;
      texts.push(v);
    } else if (type === 'number') {
      kind = K.Number;
      numbers.push(v);
    } else if (type === 'undefined') kind = K.Absent;
    else if (type === 'boolean') kind = K.Bool;
    else if (v === null) kind = K.Null;
    else if (type === 'object' || type === 'function') {
      kind = Array.isArray(v) || typeof v[Symbol.iterator] === 'function' ? K.List : K.Object;
    }
    kinds.push(kind);
    return kind;
  };
  if (!response || put(value) === K.Object) {
    const list = response ? value.patterns : value;
    if (put(list) === K.List) {
      for (const item of list) if (put(item) === K.Object) for (const name of PATTERN_FIELDS) put(item[name]);
    }
  }
  return [new Uint8Array(kinds), texts, new Float64Array(numbers)];
}

/** A response body given as text, bytes or parsed JSON, as JSON text. */
function responseText(body) {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) return new TextDecoder().decode(body);
  return JSON.stringify(body);
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
  if (isSentryEvent(input)) return fromSentryEvent(input);
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

/**
 * Whether an object is read as a Sentry event: what every Sentry SDK's events
 * carry (`event_id`, set before any processor or `beforeSend` runs), a
 * `logentry` (sentry-python's logging events), or an `exception.values` list.
 * The Python package reads by the same rule (docs/CONTRACT.md, "Reading a
 * tracker's event"; python/tests/test_reading.py runs both readers).
 */
function isSentryEvent(input) {
  return typeof input.event_id === 'string' || isObject(input.logentry) || Array.isArray(input.exception?.values);
}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);
const firstString = (...values) => values.find((v) => typeof v === 'string');

/**
 * A Sentry event's texts: the thrown exception (the last of
 * `exception.values`), its type; its value, else the log entry's or the
 * message's text; each frame's `abs_path`, else its `filename`; the first
 * `User-Agent` header (any case) of the request. A part of the wrong type is
 * not read.
 */
function fromSentryEvent(event) {
  const values = event.exception?.values;
  const last = Array.isArray(values) ? values[values.length - 1] : undefined;
  const thrown = isObject(last) ? last : {};
  const logentry = isObject(event.logentry) ? event.logentry : {};
  const entry = isObject(event.message) ? event.message : {};
  const frames = [];
  const listed = thrown.stacktrace?.frames;
  for (const frame of Array.isArray(listed) ? listed : []) {
    if (!isObject(frame)) continue;
    const url = frame.abs_path ?? frame.filename;
    if (typeof url === 'string' && url !== '') frames.push(url);
  }
  return {
    type: firstString(thrown.type),
    message: firstString(thrown.value, logentry.formatted, logentry.message, entry.formatted, entry.message, event.message),
    frames,
    userAgent: userAgentOf(event.request?.headers),
  };
}

/** The first `User-Agent` header, any case, of headers given as an object or `[name, value]` pairs. */
function userAgentOf(headers) {
  let pairs = [];
  if (Array.isArray(headers)) pairs = headers.filter((h) => Array.isArray(h) && h.length === 2);
  else if (isObject(headers)) pairs = Object.entries(headers);
  const found = pairs.find(([name, value]) => typeof name === 'string' && name.toLowerCase() === 'user-agent' && typeof value === 'string');
  return found?.[1];
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
 * How long the Sentry integration holds an error event, by default, while
 * its matcher loads (ms). Measured in headless Chromium under Chrome's
 * network emulation (docs/BENCHMARKS.md, "npm: the page-load hold"): from
 * the page's script start, the README page has its matcher (the wasm, and
 * the client's first answer) in ~0.3 s on 10 Mbps, ~1.3 s on 1.6 Mbps with
 * 150 ms of latency, ~5.0 s on 400 kbps with 400 ms. Six seconds covers
 * that slowest link with a margin; on any faster one the hold ends as soon
 * as the matcher is there, and a page that is left earlier sends what it
 * holds at once (`pagehide`).
 */
export const DEFAULT_HOLD_MS = 6000;

const isClient = (value) => typeof value?.refresh === 'function' && typeof value?.ready?.then === 'function';

/**
 * What a hook matches with, given as a `Matcher`, a client or a promise of
 * either: `value` once known (for a client, at once), `waiting` while there
 * is something worth waiting for (the promise; a client's first answer,
 * which brings the account's own patterns), `failed` when the promise was
 * rejected (events then pass, and `report` heard why).
 */
function matcherSource(given, report) {
  const source = { value: null, waiting: null, failed: false };
  const take = (value) => {
    source.value = value;
    source.waiting = null;
    if (isClient(value)) {
      const waiting = Promise.resolve(value.ready).then(() => {
        if (source.waiting === waiting) source.waiting = null;
      });
      source.waiting = waiting;
    }
    return source.waiting;
  };
  if (typeof given.then === 'function') {
    const waiting = Promise.resolve(given).then(take, (error) => {
      source.failed = true;
      source.waiting = null;
      report(error);
    });
    source.waiting = waiting;
  } else {
    take(given);
  }
  return source;
}

/**
 * The verdict of `value` (a `Matcher` or a client) on `event`, by the
 * matcher `narrowing` (the integration's matcher options) makes of it
 * (kept per matcher in `cache`: a client's changes with each new set). A
 * client without its wasm answers clean.
 */
function classifyWith(value, event, narrowing, cache) {
  if (narrowing === undefined) return value.classify(event);
  let matcher = value;
  if (isClient(value)) {
    try {
      matcher = value.matcher;
    } catch {
      return CLEAN; // no wasm: the client's onError heard why
    }
  }
  let made = cache.get(matcher);
  if (made === undefined) {
    try {
      made = narrowed(matcher, narrowing);
    } catch (refused) {
      // Told once (the caller reports it); the events keep passing.
      cache.set(matcher, null);
      throw refused;
    }
    cache.set(matcher, made);
  }
  return made === null ? CLEAN : made.classify(event);
}

/**
 * `matcher` as an integration's matcher options make it: without the
 * patterns `exclude` names, with the rule of `firstParty`.
 */
function narrowed(matcher, { exclude, firstParty }) {
  const kept = exclude === undefined ? matcher : matcher.excluding(exclude);
  if (firstParty === undefined) return kept;
  try {
    return kept.withFirstParty(firstParty);
  } finally {
    if (kept !== matcher) kept.free();
  }
}

/** The ids of the patterns a noisy verdict matched, each once, in order. */
export const patternIds = (verdict) => [...new Set(verdict.matches.map((m) => m.id))];

/** Calls the application's `onError`; what it throws is dropped. */
const reporter = (onError) => (error) => {
  try {
    onError?.(error);
  } catch {
    /* the application's handler must not break the filter */
  }
};

/**
 * The decision every integration makes, one owner for it: the Sentry
 * integration, `createBeforeSend` and each tracker's hook (trackers.js)
 * differ only in how they read their SDK's event and what they answer.
 * `matcher` is a `Matcher`, a client, or a promise of either; the other
 * options are the matcher's (`exclude`, and any option `narrowed` knows),
 * `onNoise` and `onError`. `judge(input, event, hint)` returns the verdict
 * on `input` (the event as the matcher reads it) when it is noise, and
 * `null` to keep the event: no matcher yet (events pass while it loads: no
 * hook waits on the network unless it holds, as the Sentry integration
 * does), a rejected promise, a clean verdict, or a matcher that threw (told
 * to `onError`). `onNoise(verdict, event, hint)` hears each noisy event;
 * its exceptions go to `onError` and never keep noise. `report` tells
 * `onError`; `source` is what the Sentry integration holds on.
 */
export function noiseJudge(name, { matcher, onNoise, onError, ...matcherOptions }) {
  if (matcher == null) throw new TypeError(`${name}: a matcher, a client or a promise of one is needed`);
  const narrowing = matcherOptionsOf(name, matcherOptions);
  const report = reporter(onError);
  const source = matcherSource(matcher, report);
  const cache = new WeakMap();
  function judge(input, event, hint) {
    if (source.value === null || source.failed) return null;
    let verdict;
    try {
      verdict = classifyWith(source.value, input, narrowing, cache);
    } catch (error) {
      report(error);
      return null; // never lose a report over the filter
    }
    if (!verdict.noise) return null;
    try {
      onNoise?.(verdict, event, hint);
    } catch (error) {
      report(error); // the application's counter must not keep noise
    }
    return verdict;
  }
  return { judge, report, source };
}

/**
 * The options every integration passes on to its matcher, checked once
 * when the integration is made: `exclude` (patterns left out, as
 * `Matcher.builtin`), `firstParty` (the "not our code" rule). One place names them, so an option of the matcher
 * reaches every integration by being added here and in `narrowed`.
 */
function matcherOptionsOf(name, options) {
  for (const key of Object.keys(options)) {
    if (!MATCHER_OPTIONS.includes(key)) throw new TypeError(`${name}: unknown option \`${key}\``);
  }
  return MATCHER_OPTIONS.some((key) => options[key] !== undefined) ? options : undefined;
}

/** The matcher's options an integration takes (see `matcherOptionsOf`). */
const MATCHER_OPTIONS = ['exclude', 'firstParty'];

/**
 * A `beforeSend`-style hook: returns `null` for an event the matcher calls
 * noise (so the SDK drops it), the event otherwise. `matcher` is a
 * `Matcher`, a client, or a promise of either (events pass while it is
 * pending: a hook of this form answers at once). It fails open: an event
 * it cannot read, or a matcher that throws, keeps the event and tells
 * `onError`.
 */
export function createBeforeSend(matcher, options = {}) {
  if (matcher == null) throw new TypeError('createBeforeSend: a matcher, a client or a promise of one is needed');
  const { judge } = noiseJudge('createBeforeSend', { ...options, matcher });
  return function beforeSend(event, hint) {
    return judge(event, event, hint) === null ? event : null;
  };
}

/**
 * A Sentry integration (`Sentry.init({ integrations: [noiseFilterIntegration(...)] })`):
 * an object with `name` and `processEvent`, the form Sentry's own SDK uses
 * (`eventFiltersIntegration`), so it sits beside the user's `beforeSend`.
 *
 * `matcher` is a `Matcher`, a client (`createClient`: its current matcher
 * each time), or a promise of either. While a promise is pending, or a
 * client has not had its first answer, an error event is held for at most
 * `hold` ms (Sentry's `processEvent` may answer with a promise), then
 * decided by whatever matcher there is by then: the page-load errors that
 * browser extensions throw are filtered too, and no event is ever dropped
 * for lack of a matcher (a promise still pending, or rejected, lets it
 * through). When the page is hidden (`pagehide`), held events are decided
 * at once, so none is lost with the page. Only error events are looked at
 * (transactions and other typed events pass). `mode: 'drop'` (default)
 * drops noise; `'tag'` keeps it and adds the tags `noise_filter` (`noise`)
 * and `noise_filter.patterns` (the matching pattern ids). `onNoise(verdict,
 * event)` hears of each noisy event in either mode; `onError` of a matcher
 * that could not load or throws (the event is then kept). `exclude` leaves
 * patterns out (`{ ids, categories }`, as `Matcher.builtin`); `firstParty`
 * adds the "not our code" rule (`{ origins, paths }`, as `Matcher.builtin`).
 */
export function noiseFilterIntegration({ matcher, mode = 'drop', onNoise, onError, exclude, firstParty, hold = DEFAULT_HOLD_MS } = {}) {
  if (mode !== 'drop' && mode !== 'tag') throw new TypeError("noiseFilterIntegration: mode is 'drop' or 'tag'");
  if (matcher == null) throw new TypeError('noiseFilterIntegration: a matcher, a client or a promise of one is needed');
  if (typeof hold !== 'number' || !(hold >= 0)) throw new TypeError('noiseFilterIntegration: hold is a number of milliseconds, 0 or more');
  const { judge, source } = noiseJudge('noiseFilterIntegration', { matcher, onNoise, onError, exclude, firstParty });
  /** Releases of the events held now, run at once when the page goes away. */
  const held = new Set();
  let listening = false;

  function decide(event, hint) {
    const verdict = judge(event, event, hint);
    if (verdict === null) return event;
    if (mode === 'drop') return null;
    event.tags = {
      ...event.tags,
      noise_filter: 'noise',
      'noise_filter.patterns': patternIds(verdict).join(','),
    };
    return event;
  }

  function holdUntilLoaded(event, hint) {
    if (!listening && typeof globalThis.addEventListener === 'function') {
      listening = true;
      globalThis.addEventListener('pagehide', () => {
        for (const release of [...held]) release();
      });
    }
    return new Promise((resolve) => {
      let timer;
      const release = () => {
        if (!held.delete(release)) return;
        clearTimeout(timer);
        resolve(decide(event, hint));
      };
      held.add(release);
      timer = setTimeout(release, hold);
      source.waiting.then(release, release);
    });
  }

  return {
    name: 'NoiseFilter',
    processEvent(event, hint) {
      if (event == null || (event.type !== undefined && event.type !== 'error')) return event;
      if (source.waiting !== null && hold > 0) return holdUntilLoaded(event, hint);
      return decide(event, hint);
    },
  };
}
