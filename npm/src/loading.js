// Whether an entry's wasm is there, and why not. One record per glue
// (`loadingOf(glue)`), shared by the entry that loads the wasm and the API
// over it, so no import of the package can fail because the wasm did not
// load: an ad blocker, a CDN's 404 or a Content-Security-Policy without
// 'wasm-unsafe-eval' makes the entry record the failure and finish loading.
// The matcher's constructors then throw it (`check`), the client matches
// nothing and tells its `onError`, the Sentry integration and
// `createBeforeSend` let every event through.

const records = new WeakMap();

/**
 * The loading record of `glue` (a wasm-bindgen `web` module's namespace).
 * Kept by the glue's `initSync`, not by the namespace: a bundler may make
 * one namespace object per importing module (webpack's scope hoisting
 * does), but a function of the module is one object.
 */
export function loadingOf(glue) {
  let record = records.get(glue.initSync);
  if (record === undefined) {
    record = new Loading(glue);
    records.set(glue.initSync, record);
  }
  return record;
}

class Loading {
  #glue;
  /** 'idle' (nothing asked yet), 'loading', 'loaded' or 'failed'. */
  #state = 'idle';
  #failure;
  #attempt;
  /** Resolvers of `settled()` waiting for the state to leave idle/loading. */
  #waiting = [];

  constructor(glue) {
    this.#glue = glue;
  }

  /** Whether the wasm is loaded: the matcher's constructors work. */
  get loaded() {
    return this.#state === 'loaded';
  }

  /** The last attempt: resolves when the wasm is there, rejects with why not. */
  get attempt() {
    return this.#attempt;
  }

  /** Why the last attempt failed, or undefined. */
  get failure() {
    return this.#state === 'failed' ? this.#failure : undefined;
  }

  /**
   * Loads the wasm from `source` (a URL, a `Response`, bytes or a compiled
   * `WebAssembly.Module`) unless it is loaded or loading; after a failure,
   * tries again. Resolves when it is there, rejects with why not.
   */
  load(source) {
    if (this.#state === 'loaded' || this.#state === 'loading') return this.#attempt;
    this.#state = 'loading';
    this.#attempt = this.#instantiate(source).then(
      () => this.#settle('loaded'),
      (error) => {
        this.#settle('failed', error);
        throw error;
      },
    );
    return this.#attempt;
  }

  /** Loads synchronously from `read()` (bytes or a module); records a failure instead of throwing it. */
  loadSync(read) {
    this.#state = 'loading';
    try {
      this.#glue.initSync({ module: read() });
      this.#settle('loaded');
      this.#attempt = Promise.resolve();
    } catch (error) {
      this.#settle('failed', error);
      this.#attempt = Promise.reject(error);
      this.#attempt.catch(() => {}); // asked for through init(), not unhandled
    }
  }

  /** Resolves with `loaded` once an attempt has ended (at once if one has); never rejects. */
  settled() {
    if (this.#state === 'loaded' || this.#state === 'failed') return Promise.resolve(this.loaded);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Throws unless the wasm is loaded, saying why it is not. */
  check() {
    if (this.#state === 'loaded') return;
    if (this.#state === 'failed') {
      throw new Error(`noise-filter: the wasm did not load: ${describe(this.#failure)}`, { cause: this.#failure });
    }
    throw new Error('noise-filter: the wasm is not loaded yet: await init() first');
  }

  async #instantiate(source) {
    // Fetched here rather than by the glue, so a 404 (a CDN, an ad blocker's
    // rule) is reported with its status, not as a module that fails to compile.
    if (typeof source === 'string' || source instanceof URL) {
      const response = await fetch(source);
      if (!response.ok) {
        await response.body?.cancel?.().catch(() => {});
        throw Object.assign(new Error(`noise-filter: ${source} answered ${response.status}`), { status: response.status });
      }
      source = response;
    }
    await this.#glue.default({ module_or_path: source });
  }

  #settle(state, failure) {
    this.#state = state;
    this.#failure = failure;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const resolve of waiting) resolve(state === 'loaded');
  }
}

function describe(error) {
  return error instanceof Error ? error.message : String(error);
}
