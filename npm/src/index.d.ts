// Types of the `noise-filter` package, written by hand and checked by `tsc`
// in the package's tests (npm/test/types). Every runtime entry exports the
// same API.

/**
 * A value as a store returns it: text or bytes (a counter: also a number);
 * absent: null or undefined.
 */
export type StoredValue = string | Uint8Array | ArrayBuffer | number | null | undefined;

/**
 * Where API keys live. `key` is `key/<SHA-256 hex of the API key>`, the value
 * the key record written by {@link createKey}: the same layout as the Spin
 * app's `default` key-value store, so one store can serve both.
 */
export interface KeyStore {
  get(key: string): Promise<StoredValue> | StoredValue;
}

/** Where accounts' custom patterns live: `account/<account>/patterns`. */
export interface CustomPatternStore {
  get(key: string): Promise<StoredValue> | StoredValue;
}

/**
 * Rate-limit counters (`rate/<key hash>/<window>`). `increment` must be
 * atomic across every process that serves the same keys (Redis `INCRBY`,
 * a Durable Object, …): a missing counter is 0, and it returns the new value.
 */
export interface RateLimitStore {
  get(key: string): Promise<StoredValue> | StoredValue;
  increment(key: string, delta: number): Promise<number> | number;
  delete(key: string): Promise<void> | void;
}

/** A store the admin helpers can write: a {@link KeyStore} or {@link CustomPatternStore} with `set`. */
export interface WritableStore {
  get(key: string): Promise<StoredValue> | StoredValue;
  set(key: string, value: string): Promise<void> | void;
}

/**
 * Every store in one process's memory: keys, custom patterns and counters.
 * Fine for one process; several processes need a shared store.
 */
export class MemoryStore implements KeyStore, CustomPatternStore, RateLimitStore, WritableStore {
  get(key: string): Promise<string | number | null>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  increment(key: string, delta: number): Promise<number>;
  /** Every key held, in insertion order. */
  keys(): string[];
}

export interface HandlerOptions {
  /** Key records (see {@link createKey}). */
  keys: KeyStore;
  /** Accounts' custom patterns (see {@link addCustomPatterns}); may be the same store as `keys`. */
  customPatterns: CustomPatternStore;
  /** Rate-limit counters; default: a new {@link MemoryStore} (one process only). */
  rateLimitStore?: RateLimitStore;
  /** Milliseconds since the Unix epoch; default `Date.now`. */
  clock?: () => number;
}

/** The service as a fetch handler, answering as the Spin component does. */
export function createHandler(options: HandlerOptions): (request: Request) => Promise<Response>;

export interface CreateKeyOptions {
  /** The account: 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit. */
  account: string;
  /** A note of the owner's choosing ("ci", "production"). */
  label?: string;
  /** Creation time, Unix milliseconds; default now. */
  now?: number;
  /** The key's random bytes, as many as the core takes (24); default `crypto.getRandomValues`. */
  random?: Uint8Array;
}

/** Creates an API key (`nf_` and 48 hex digits), stores only its hash's record, returns the key once. */
export function createKey(store: WritableStore, options: CreateKeyOptions): Promise<string>;

/** Revokes a key; false when the store does not know it. */
export function revokeKey(store: WritableStore, key: string, options?: { now?: number }): Promise<boolean>;

/** A custom pattern as an account adds it. */
export interface NewPattern {
  /** The text: a case-insensitive substring, or with `type: "regex"` an ECMAScript regex in the shared subset. */
  pattern: string;
  /** Default `"string"`. */
  type?: PatternType;
  /** `custom-…`; assigned (`custom-1`, …) when absent. */
  id?: string;
  /** One of the six categories in either variant's spelling, or `custom` (default). */
  category?: string;
  /** 0 to 1; default 1. */
  confidence?: number;
  /** Where it comes from. */
  source?: string;
}

/** Adds custom patterns to an account, all or none; returns their ids. Throws when one is refused. */
export function addCustomPatterns(
  store: WritableStore,
  account: string,
  patterns: readonly NewPattern[],
  options?: { now?: number },
): Promise<string[]>;

/** Removes an account's custom pattern; false when it had no such id. */
export function removeCustomPattern(
  store: WritableStore,
  account: string,
  id: string,
  options?: { now?: number },
): Promise<boolean>;

/** An account's custom patterns as Variant A lists them. */
export function listCustomPatterns(store: KeyStore, account: string): Promise<Pattern[]>;

export type PatternType = 'string' | 'regex';

/** A pattern as the matcher holds it. */
export interface Pattern {
  id: string;
  pattern: string;
  type: PatternType;
  /** As the source spelled it (`browser-extension`, `BOT_TRAFFIC`, `custom`, …). */
  category: string;
  confidence: number;
}

/** A pattern given to the matcher: `type` defaults to `"string"`, `confidence` to 1. */
export interface PatternInput {
  id: string;
  pattern: string;
  type?: PatternType;
  category?: string;
  confidence?: number;
}

/** An error event as the matcher reads it. */
export interface EventInput {
  /** The message or exception value. */
  message?: string;
  /** The exception type (`TypeError`); the message is then read as `Type: message`. */
  type?: string;
  /** A JavaScript stack trace; its script URLs become `frames` when `frames` is absent. */
  stack?: string;
  /** Script URLs of the stack frames. */
  frames?: readonly string[];
  /** The URL of the script the error came from (`ErrorEvent.filename`): read as the first frame. */
  url?: string;
  /** The user agent of the browser or client that reported it. */
  userAgent?: string;
}

/**
 * The part of a Sentry event the matcher reads. An object with a string
 * `event_id`, a `logentry` or an `exception.values` array is read as one
 * (the repository's docs/CONTRACT.md, "Reading a tracker's event").
 */
export interface SentryLikeEvent {
  event_id?: string;
  message?: string | { formatted?: string; message?: string };
  logentry?: { formatted?: string; message?: string };
  exception?: {
    values?: ReadonlyArray<{
      type?: string;
      value?: string | null;
      stacktrace?: { frames?: ReadonlyArray<{ filename?: string | null; abs_path?: string | null }> };
    }>;
  };
  request?: { headers?: Record<string, string> | ReadonlyArray<readonly [string, string]> };
}

/** What the matcher classifies. */
export type Classifiable = Error | string | EventInput | SentryLikeEvent;

/** One pattern that matched one text of the event. */
export interface Match {
  id: string;
  category: string;
  /**
   * What the pattern recognises, finer than its category (`search-engine`,
   * `ai-crawler`, `wallet`, `translator`, …): a built-in pattern's tags, also
   * when it came in a fetched response; empty for any other pattern.
   */
  tags: readonly string[];
  confidence: number;
  /** Which text: the message (`Type: message`), a frame URL, or the user agent. */
  field: 'message' | 'frame' | 'userAgent';
  /** For `frame`: its position in the event's frames. */
  index?: number;
}

/** The matcher's answer: noise when any pattern matched. */
export interface Verdict {
  noise: boolean;
  /** By text (message, frames, user agent), then pattern order; the first-party rule's (`first-party-rule`) last. */
  matches: readonly Match[];
}

/**
 * Patterns a matcher leaves out: by id, by category (either variant's
 * spelling, or `custom`), by tag (the built-ins of one sub-kind). A test
 * run whose headless browser the catalog calls a bot leaves out
 * `headless-chrome`: `{ ids: ['headless-chrome'] }`. The core checks the
 * words: an unknown category or tag is refused.
 */
export interface Exclusions {
  /** Pattern ids (`headless-chrome`, `custom-3`). */
  ids?: readonly string[];
  /** Categories: `bot-traffic` or `BOT_TRAFFIC`, …, or `custom`. */
  categories?: readonly string[];
  /** Tags of the catalog (`social-preview`, `uptime-monitor`, `wallet`, …): the built-ins that carry one. */
  tags?: readonly string[];
}

/**
 * Where the application's own code lives, for the "not our code" rule: an
 * event whose stack frames are all elsewhere (injected scripts, extension
 * bundles, `webkit-masked-url://hidden/`) is noise in category
 * `third-party-script`, its verdict matching `first-party-rule`. Frames
 * without a place (`<anonymous>`, `native`, no file name, the browser's own)
 * count for neither side; an event with no placed frame is never noise by
 * it. The core checks the words: at least one origin or path.
 */
export interface FirstParty {
  /** Origins, `scheme://host[:port]`: `https://app.example.com`, `app://`. */
  origins?: readonly string[];
  /** Path prefixes of a frame's path, whatever its origin: `/static/app/`, `/srv/app/`. */
  paths?: readonly string[];
}

/** A compiled pattern set; the same matcher as the service's core. */
export class Matcher {
  private constructor();
  /**
   * The built-in catalog at or above `minConfidence`; without it, the core's
   * default (0.5): the built-in patterns the service lists by default, the
   * same set as `Matcher.builtin()` in Python and `Matcher::builtin_default`
   * in Rust.
   */
  static builtin(options?: { minConfidence?: number; exclude?: Exclusions; firstParty?: FirstParty }): Matcher;
  /**
   * The patterns of a Variant A or B response body from any deployment:
   * text, bytes or parsed JSON (an imported `filters.json` too); the core
   * reads it and refuses a body that is not a pattern list, with the reason.
   */
  static fromResponse(
    body: string | Uint8Array | ArrayBuffer | { readonly patterns: readonly unknown[] },
    options?: { firstParty?: FirstParty },
  ): Matcher;
  /** Patterns of your own. Throws when a regex is outside the shared subset. */
  static fromPatterns(patterns: readonly PatternInput[]): Matcher;
  /** A new matcher: these patterns after this one's. */
  withPatterns(patterns: readonly PatternInput[]): Matcher;
  /** A new matcher without the patterns `exclude` names. */
  excluding(exclude: Exclusions): Matcher;
  /** A new matcher with the "not our code" rule of `firstParty`. */
  withFirstParty(firstParty: FirstParty): Matcher;
  /** The patterns, in order. */
  readonly patterns: Pattern[];
  /** Which patterns match which text of the event. */
  classify(input: Classifiable): Verdict;
  /** Whether any pattern matches the event. */
  isNoise(input: Classifiable): boolean;
  /** Frees the wasm memory now rather than when the matcher is collected. */
  free(): void;
}

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** The service's base URL (`https://filters.example.com`); the path is added. */
  url: string | URL;
  /**
   * An API key of the account, or `null` when a proxy in front of the
   * service adds it (a public site's pages: no key in the page).
   */
  key: string | null;
  /** `'v1'` (`/v1/filters`, the default) or `'api'` (`/api/v1/filters`). */
  variant?: 'v1' | 'api';
  /** Sent as `minConfidence`; also the built-in fallback's threshold. */
  minConfidence?: number;
  /** Patterns left out of every set the client matches with, fetched or built in. */
  exclude?: Exclusions;
  /** The "not our code" rule in every set the client matches with. */
  firstParty?: FirstParty;
  /** Refresh in the background (default true); false: only on `refresh()`. */
  refresh?: boolean;
  /** The `fetch` to use (default: the runtime's). */
  fetch?: (input: URL, init: { headers: Record<string, string> }) => Promise<Response>;
  /**
   * Told of every failed fetch (network, 4xx, 5xx: an `Error` with the
   * answer's `status`; an unreadable body) and of a wasm that did not load;
   * never thrown.
   */
  onError?: (error: unknown) => void;
}

/** What one refresh did: the HTTP status (0: no answer; -1: closed) and the ms until the next. */
export interface RefreshOutcome {
  status: number;
  next: number | undefined;
}

/** A consumer of a running noise-filter service; see {@link createClient}. */
export interface Client {
  /**
   * The matcher to use now: the service's last good set, else the built-in
   * catalog. Read it when you need it: a refresh replaces it. Throws while
   * the wasm is not loaded, saying why.
   */
  readonly matcher: Matcher;
  /** `isNoise` by the current matcher; false while the wasm is not loaded. */
  isNoise(input: Classifiable): boolean;
  /** `classify` by the current matcher; clean while the wasm is not loaded. */
  classify(input: Classifiable): Verdict;
  /** The fetched set: its ETag, Variant A's `version`, when it was last confirmed (ms); null before any. */
  readonly set: { etag: string | undefined; version: string | undefined; fetchedAt: number } | null;
  /**
   * Resolves once the first fetch has ended, whatever its outcome (a
   * `200` once the wasm is there to compile it); never rejects.
   */
  readonly ready: Promise<void>;
  /** Fetches now (joined with one already running); never rejects. */
  refresh(): Promise<RefreshOutcome>;
  /** Stops refreshing; the current matcher stays usable. */
  close(): void;
}

/**
 * Fetches the account's patterns from a running service and keeps them
 * current in the background: `If-None-Match` with the last ETag (a 304 keeps
 * the set), the answer's `max-age` clamped to 5-15 minutes, `Retry-After` on
 * 429, backoff with jitter on network errors and 5xx. Until the first answer,
 * and while the service is unreachable, it matches with the last good set,
 * else the built-in catalog. Never throws into the application.
 */
export function createClient(options: ClientOptions): Client;

/** The event the matcher reads from an input. */
export function toEvent(input: Classifiable): {
  type?: string;
  message?: string;
  frames?: string[];
  userAgent?: string;
};

/** Script URLs of a V8, SpiderMonkey or JavaScriptCore stack trace, line and column cut off. */
export function parseStack(stack: string | undefined): string[];

/** What the Sentry integration and `createBeforeSend` match with: a matcher, a client, or a promise of either. */
export type MatcherSource = Matcher | Client | PromiseLike<Matcher | Client>;

/** Options of {@link noiseFilterIntegration}. */
export interface NoiseFilterIntegrationOptions<E = SentryLikeEvent> {
  /**
   * A matcher, a client (its current matcher each time), or a promise of
   * either: while it is pending, or a client waits for its first answer,
   * an error event is held for at most `hold` ms, then decided by what is
   * there (no matcher: the event is sent).
   */
  matcher: MatcherSource;
  /** `'drop'` (default): noise is not sent. `'tag'`: sent, with tags `noise_filter` and `noise_filter.patterns`. */
  mode?: 'drop' | 'tag';
  /**
   * How long an error event may wait for the matcher to load, in ms
   * (default {@link DEFAULT_HOLD_MS}); 0: events pass while it loads.
   */
  hold?: number;
  /** Patterns left out (as `Matcher.builtin`'s `exclude`). */
  exclude?: Exclusions;
  /** The "not our code" rule (as `Matcher.builtin`'s `firstParty`). */
  firstParty?: FirstParty;
  /** Hears of each noisy event, in either mode. */
  onNoise?(verdict: Verdict, event: E, hint: unknown): void;
  /** Hears why a promised matcher could not be had, or a matcher threw (the event is then sent). */
  onError?(error: unknown): void;
}

/** How long the Sentry integration holds an error event, by default, while its matcher loads (ms). */
export const DEFAULT_HOLD_MS: number;

/** The integration: Sentry's `Integration` shape, for any event type the SDK has. */
export interface NoiseFilterIntegration {
  name: string;
  processEvent<T extends SentryLikeEvent>(event: T, hint: unknown, client?: unknown): T | null | PromiseLike<T | null>;
}

/**
 * A Sentry integration, as Sentry's own are (`name` + `processEvent`): put
 * it in `Sentry.init({ integrations: [...] })` of `@sentry/browser`,
 * `@sentry/node` or any SDK on `@sentry/core` 8 or later, beside your own
 * `beforeSend`. Only error events are looked at. No type argument is
 * needed; one types `onNoise`'s event.
 */
export function noiseFilterIntegration<E extends SentryLikeEvent = SentryLikeEvent>(
  options: NoiseFilterIntegrationOptions<E>,
): NoiseFilterIntegration;

/** Options of {@link createBeforeSend}. */
export interface BeforeSendOptions<E = Classifiable, H = unknown> {
  /** Sees each dropped event's verdict. */
  onNoise?(verdict: Verdict, event: E, hint: H): void;
  /** Hears why a promised matcher could not be had, or a matcher threw (the event is then kept). */
  onError?(error: unknown): void;
  /** Patterns left out (as `Matcher.builtin`'s `exclude`). */
  exclude?: Exclusions;
  /** The "not our code" rule (as `Matcher.builtin`'s `firstParty`). */
  firstParty?: FirstParty;
}

/**
 * A `beforeSend` hook for Sentry-style SDKs: `null` (drop) for noise, the
 * event otherwise, for any event type (`Sentry.init({ beforeSend:
 * createBeforeSend(matcher) })` needs no type argument). A promised matcher
 * lets events through until it is there.
 */
export function createBeforeSend(
  matcher: MatcherSource,
  options?: BeforeSendOptions,
): <E extends Classifiable>(event: E, hint?: unknown) => E | null;
/** With a type argument: the hook of that event type, and `onNoise` sees it. */
export function createBeforeSend<E extends Classifiable, H = unknown>(
  matcher: MatcherSource,
  options?: BeforeSendOptions<E, H>,
): (event: E, hint?: H) => E | null;

// ------------------------------------------------ the other trackers --
// Each hook is typed by the shape it reads, not by its SDK's package (not
// a dependency): each is assignable where its SDK takes it (checked against
// the real SDKs' types in the package's tests). A type argument types
// `onNoise`'s event and the user's own hook.

/** Options every tracker's integration takes. */
export interface TrackerOptions<E> {
  /**
   * A matcher, a client (its current matcher each time), or a promise of
   * either: while it is pending, or a client waits for its first answer,
   * events pass (no hook here holds an event).
   */
  matcher: MatcherSource;
  /** Patterns left out (as `Matcher.builtin`'s `exclude`). */
  exclude?: Exclusions;
  /** Hears of each noisy event, in either mode. */
  onNoise?(verdict: Verdict, event: E, hint: unknown): void;
  /** Hears why a promised matcher could not be had, a matcher threw, or an event could not be read (the event is then kept). */
  onError?(error: unknown): void;
}

/** What the Datadog RUM hook reads: an event with its `type` (`'error'` ones are looked at). */
export interface DatadogLikeEvent {
  readonly type: string;
}

/** Options of {@link datadogBeforeSend}. */
export interface DatadogBeforeSendOptions<E = DatadogLikeEvent, C = unknown> extends TrackerOptions<E> {
  /** `'drop'` (default): noise is not sent. `'tag'`: sent, with `context.noise_filter` = `{ noise: true, patterns }`. */
  mode?: 'drop' | 'tag';
  /** Your own `beforeSend`: runs after the filter, on every event it keeps; its answer is the hook's. */
  beforeSend?(event: E, context: C): boolean | void;
}

/**
 * `datadogRum.init({ beforeSend: datadogBeforeSend({ matcher }) })`
 * (`@datadog/browser-rum`): `false` for a noisy error event.
 */
export function datadogBeforeSend<E extends DatadogLikeEvent = DatadogLikeEvent, C = unknown>(
  options: DatadogBeforeSendOptions<E, C>,
): (event: E, context: C) => boolean;

/** What the Bugsnag hook reads: an event with its `errors` (the thrown one first). */
export interface BugsnagLikeEvent {
  readonly errors: readonly object[];
}

/** Options of {@link bugsnagOnError}. */
export interface BugsnagOnErrorOptions<E = BugsnagLikeEvent> extends TrackerOptions<E> {
  /** `'drop'` (default): noise is not sent. `'tag'`: sent, with the metadata section `noise_filter` = `{ noise: true, patterns }`. */
  mode?: 'drop' | 'tag';
}

/**
 * An `onError` callback of `@bugsnag/js` (or `@bugsnag/browser`,
 * `@bugsnag/node`): `false` for noise. List it first:
 * `Bugsnag.start({ onError: [bugsnagOnError({ matcher }), yours] })`.
 */
export function bugsnagOnError<E extends BugsnagLikeEvent = BugsnagLikeEvent>(options: BugsnagOnErrorOptions<E>): (event: E) => boolean;

/** Options of {@link rollbarCheckIgnore}. */
export interface RollbarCheckIgnoreOptions<I = object> extends TrackerOptions<I> {
  /** Only `'drop'`: `checkIgnore` cannot change the item. */
  mode?: 'drop';
  /** Your own `checkIgnore`: runs after the filter, on every item it keeps; its answer is the hook's. */
  checkIgnore?(isUncaught: boolean, args: unknown[], item: I): boolean;
}

/** `new Rollbar({ checkIgnore: rollbarCheckIgnore({ matcher }) })` (`rollbar`): `true` (ignore) for noise. */
export function rollbarCheckIgnore<I extends object = object>(
  options: RollbarCheckIgnoreOptions<I>,
): (isUncaught: boolean, args: unknown[], item: I) => boolean;

/** What the Honeybadger hook reads: a notice (`name`, `message`, `backtrace`, `tags`, …). */
export interface HoneybadgerLikeNotice {
  name?: string;
  message?: string;
  tags?: string | string[];
  context?: Record<string, unknown>;
}

/** Options of {@link honeybadgerBeforeNotify}. */
export interface HoneybadgerBeforeNotifyOptions<N = HoneybadgerLikeNotice> extends TrackerOptions<N> {
  /** `'drop'` (default): noise is not sent. `'tag'`: sent, with the tag `noise_filter` and `context.noise_filter` = `{ noise: true, patterns }`. */
  mode?: 'drop' | 'tag';
}

/**
 * `Honeybadger.beforeNotify(honeybadgerBeforeNotify({ matcher }))`
 * (`@honeybadger-io/js`): `false` for noise. Honeybadger runs every
 * `beforeNotify` handler, yours too, whatever this one answers.
 */
export function honeybadgerBeforeNotify<N extends HoneybadgerLikeNotice = HoneybadgerLikeNotice>(
  options: HoneybadgerBeforeNotifyOptions<N>,
): (notice?: N) => boolean;

/** What the PostHog hook reads: an event with its name (`'$exception'` ones are looked at). */
export interface PosthogLikeEvent {
  event: string;
}

/** Options of {@link posthogBeforeSend}. */
export interface PosthogBeforeSendOptions<E = PosthogLikeEvent> extends TrackerOptions<E> {
  /** `'drop'` (default): noise is not sent. `'tag'`: sent, with the properties `noise_filter: true` and `noise_filter_patterns`. */
  mode?: 'drop' | 'tag';
}

/**
 * A `before_send` function of `posthog-js`: `null` for a noisy
 * `$exception` event. List it first:
 * `posthog.init(token, { before_send: [posthogBeforeSend({ matcher }), yours] })`.
 */
export function posthogBeforeSend(options: PosthogBeforeSendOptions): <E extends PosthogLikeEvent>(event: E) => E | null;

/**
 * The wasm's loading: resolves once it is loaded (trying again after a
 * failure), rejects with why it is not (blocked, a `404` with its `status`,
 * a Content-Security-Policy without `'wasm-unsafe-eval'`). Importing the
 * package never fails for it: the matcher's constructors then throw that
 * reason, a client matches nothing, the Sentry integration and
 * `createBeforeSend` let every event through. `wasm`: where to find it, or
 * its bytes, or a compiled `WebAssembly.Module` (default: the file next to
 * the module).
 */
export function init(wasm?: string | URL | Request | Response | BufferSource | WebAssembly.Module): Promise<void>;
