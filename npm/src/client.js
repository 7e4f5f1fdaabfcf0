// `createClient`: a consumer of a running noise-filter service. It keeps the
// account's pattern set, refreshes it in the background as the service's
// cache headers advise, and always has a matcher to give: the last good set,
// else the built-in catalog. The patterns are read and matched by the core
// (`Matcher.fromResponse`); this file only decides when to ask.
//
// Refresh policy (times in ms):
// - 200: the new set; next refresh after the response's `max-age`, clamped
//   to [REFRESH_MIN, REFRESH_MAX] (the interface advises caching 5 to 15 min).
// - 304 (sent `If-None-Match` with the last ETag): the set is current; the
//   same schedule as a 200.
// - 429: after `Retry-After` (seconds or an HTTP date), at least REFRESH_MIN
//   is not imposed: the service said when.
// - network errors, 5xx and any other answer: exponential backoff with full
//   jitter from BACKOFF_FIRST, doubling, capped at REFRESH_MAX; a success
//   resets it.
// Nothing here throws into the application: failures go to `onError` (an
// HTTP failure as an `Error` with the answer's `status`). A replaced matcher
// is not freed here (the application may still hold it); the garbage
// collector frees its wasm memory.
//
// The wasm may not be there yet (`noise-filter/matcher/init` before
// `init()`), or may never be (blocked, refused by a Content-Security-Policy):
// the first fetch is sent at once all the same, the answer is compiled when
// the wasm has loaded, and until then the client matches nothing (every
// event is kept). A wasm that fails to load is told to `onError` once.
//
// Compressed answers: `Accept-Encoding` is left to `fetch`, which sends it
// and decodes the answer in every runtime the package supports (browsers,
// Node, Deno, Bun, workerd): a browser forbids setting it, and a fetch that
// would not decode what it asked for is not one to ask for it through. The
// ETag kept is the encoded answer's, which revalidates it (docs/CONTRACT.md).

const REFRESH_MIN = 5 * 60_000;
const REFRESH_MAX = 15 * 60_000;
const BACKOFF_FIRST = 5_000;

/** `max-age` of a Cache-Control value, in ms, or undefined. */
function maxAge(cacheControl) {
  const m = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cacheControl ?? '');
  return m ? Number(m[1]) * 1000 : undefined;
}

/** `Retry-After` (delay-seconds or an HTTP date) in ms from `now`, or undefined. */
function retryAfter(value, now) {
  if (value == null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const clamp = (ms, lo, hi) => Math.min(hi, Math.max(lo, ms));

/** An HTTP failure as `onError` hears it: the path and the status, and `status`. */
function httpError(endpoint, status) {
  return Object.assign(new Error(`noise-filter: ${endpoint.pathname} answered ${status}`), { status });
}

/** `createClient` over one entry's `Matcher` class and its wasm's loading (loading.js). */
export function clientFor(Matcher, loading) {
  return function createClient({
    url,
    key,
    variant = 'v1',
    minConfidence,
    exclude,
    firstParty,
    refresh = true,
    fetch: fetchImpl = globalThis.fetch,
    onError = () => {},
    now = Date.now,
    random = Math.random,
  } = {}) {
    if (typeof url !== 'string' && !(url instanceof URL)) throw new TypeError('createClient: url is the service\'s base URL');
    // `null`, said outright: a proxy in front of the service adds the key
    // (docs/NPM.md, "Pages of a public site"); a key merely forgotten is refused.
    if (key !== null && (typeof key !== 'string' || key === '')) throw new TypeError('createClient: key is an API key (null: a proxy adds it)');
    if (variant !== 'v1' && variant !== 'api') throw new TypeError("createClient: variant is 'v1' or 'api'");
    if (typeof fetchImpl !== 'function') throw new TypeError('createClient: no fetch in this runtime; pass one');
    const path = variant === 'v1' ? 'v1/filters' : 'api/v1/filters';
    // A path (`/noise-filter`: a proxy on the page's own origin) is read
    // against the page's address, as `fetch` would read it.
    const base = String(url).endsWith('/') ? String(url) : `${url}/`;
    let endpoint;
    try {
      endpoint = new URL(path, new URL(base, globalThis.location?.href));
    } catch {
      throw new TypeError(`createClient: url is the service's base URL (or, in a page, a path of its origin): ${String(url)}`);
    }
    if (minConfidence !== undefined) endpoint.searchParams.set('minConfidence', String(minConfidence));

    let fetched = null; // { matcher, etag, version, fetchedAt }
    let builtin = null;
    /** Why `exclude` was refused, when it could only be checked once the wasm had loaded. */
    let refused;
    let failures = 0;
    let timer = null;
    let closed = false;
    let inFlight = null;
    let firstDone;
    const ready = new Promise((resolve) => { firstDone = resolve; });

    const report = (error) => {
      try { onError(error); } catch { /* the application's handler must not break the client */ }
    };

    function schedule(ms) {
      if (closed || !refresh) return;
      clearTimeout(timer);
      timer = setTimeout(() => { void update(); }, ms);
      // Node, Bun, Deno: a pending refresh does not keep the process alive.
      if (typeof timer === 'object' && typeof timer?.unref === 'function') timer.unref();
      else if (typeof Deno !== 'undefined' && typeof Deno.unrefTimer === 'function') Deno.unrefTimer(timer);
    }

    /**
     * `matcher` without the excluded patterns, with the first-party rule
     * (the core reads and checks `exclude` and `firstParty`).
     */
    const narrow = (matcher) => {
      const kept = exclude === undefined ? matcher : matcher.excluding(exclude);
      return firstParty === undefined ? kept : kept.withFirstParty(firstParty);
    };

    // `exclude` and `firstParty` are checked now when the wasm is there
    // (refused, they throw, as a wrong `url` does), else when the first
    // matcher is built.
    if ((exclude !== undefined || firstParty !== undefined) && loading.loaded) narrow(Matcher.fromPatterns([]));
    // A wasm that does not load is told once; the client then matches nothing.
    void loading.settled().then((loaded) => {
      if (!loaded) report(loading.failure);
    });

    function backoff() {
      const cap = Math.min(REFRESH_MAX, BACKOFF_FIRST * 2 ** failures);
      failures += 1;
      return Math.max(1000, Math.round(random() * cap));
    }

    async function attempt() {
      const headers = key === null ? {} : { authorization: `Bearer ${key}` };
      if (fetched?.etag) headers['if-none-match'] = fetched.etag;
      let response;
      try {
        response = await fetchImpl(endpoint, { headers });
      } catch (error) {
        report(error);
        return { status: 0, next: backoff() };
      }
      const started = now();
      if (response.status === 200) {
        try {
          const body = await response.text();
          // Compiled once the wasm is there: a page's first fetch runs while it loads.
          if (!(await loading.settled())) return { status: 200, next: backoff() };
          const matcher = narrow(Matcher.fromResponse(body));
          let version;
          try { version = JSON.parse(body).version; } catch { version = undefined; }
          fetched = { matcher, etag: response.headers.get('etag') ?? undefined, version, fetchedAt: started };
          failures = 0;
          return { status: 200, next: clamp(maxAge(response.headers.get('cache-control')) ?? REFRESH_MIN, REFRESH_MIN, REFRESH_MAX) };
        } catch (error) {
          report(error);
          return { status: 200, next: backoff() };
        }
      }
      await response.body?.cancel?.().catch(() => {});
      if (response.status === 304 && fetched) {
        fetched.fetchedAt = started;
        failures = 0;
        return { status: 304, next: clamp(maxAge(response.headers.get('cache-control')) ?? REFRESH_MIN, REFRESH_MIN, REFRESH_MAX) };
      }
      report(httpError(endpoint, response.status));
      if (response.status === 429) {
        const wait = retryAfter(response.headers.get('retry-after'), started);
        if (wait !== undefined) return { status: 429, next: Math.max(1000, wait) };
      }
      return { status: response.status, next: backoff() };
    }

    /** One refresh now (joined if one is running); resolves with what happened, never rejects. */
    function update() {
      if (closed) return Promise.resolve({ status: -1, next: undefined });
      inFlight ??= attempt()
        .catch((error) => { report(error); return { status: 0, next: backoff() }; })
        .then((outcome) => {
          inFlight = null;
          firstDone();
          schedule(outcome.next);
          return outcome;
        });
      return inFlight;
    }

    /** The matcher to use now, or null: no wasm (yet), or `exclude` or `firstParty` refused. */
    const usable = () => {
      if (!loading.loaded || refused !== undefined) return null;
      if (fetched !== null) return fetched.matcher;
      if (builtin === null) {
        try {
          builtin = Matcher.builtin({ minConfidence, exclude, firstParty });
        } catch (error) {
          refused = error;
          report(error);
          return null;
        }
      }
      return builtin;
    };
    const CLEAN = Object.freeze({ noise: false, matches: Object.freeze([]) });

    void update();

    return {
      /**
       * The matcher to use now: the service's last good set, else the
       * built-in catalog. Throws when the wasm is not loaded, saying why.
       */
      get matcher() {
        loading.check();
        const matcher = usable();
        if (matcher === null) throw refused;
        return matcher;
      },
      /** Whether the event is noise, by the current matcher (false without one). Never throws for a reachable reason. */
      isNoise(input) { return usable()?.isNoise(input) ?? false; },
      classify(input) { return usable()?.classify(input) ?? CLEAN; },
      /** The fetched set's ETag, its `version` (Variant A), when it was last confirmed; null before any. */
      get set() { return fetched ? { etag: fetched.etag, version: fetched.version, fetchedAt: fetched.fetchedAt } : null; },
      /** Resolves once the first fetch has ended, whatever its outcome. */
      ready,
      refresh: update,
      /** Stops refreshing; the current matcher stays usable. */
      close() {
        closed = true;
        clearTimeout(timer);
      },
    };
  };
}
