// Type-level tests of the package's index.d.ts: every line must compile under
// `strict`, and every `@ts-expect-error` must be an error.
import {
  type Classifiable,
  type HandlerOptions,
  type KeyStore,
  type Match,
  type RateLimitStore,
  type Verdict,
  Matcher,
  MemoryStore,
  addCustomPatterns,
  createBeforeSend,
  createHandler,
  createKey,
  listCustomPatterns,
  parseStack,
  removeCustomPattern,
  revokeKey,
  toEvent,
} from 'noise-filter';

// A key store over anything with a get.
const redisLike: KeyStore = { get: async (key: string) => (key.length > 0 ? '{"account":"a"}' : null) };
const counters: RateLimitStore = {
  get: (key: string) => key.length,
  increment: async (_key: string, delta: number) => delta,
  delete: async () => {},
};
const options: HandlerOptions = { keys: redisLike, customPatterns: redisLike, rateLimitStore: counters, clock: Date.now };
const handle: (request: Request) => Promise<Response> = createHandler(options);
void handle;

// @ts-expect-error: customPatterns is required
createHandler({ keys: redisLike });
// @ts-expect-error: a rate-limit store needs increment and delete
createHandler({ keys: redisLike, customPatterns: redisLike, rateLimitStore: { get: () => null } });

async function admin(): Promise<void> {
  const store = new MemoryStore();
  const key: string = await createKey(store, { account: 'acme', label: 'ci', random: new Uint8Array(24) });
  const ids: string[] = await addCustomPatterns(store, 'acme', [{ pattern: 'x-widget', type: 'string', category: 'custom' }]);
  const removed: boolean = await removeCustomPattern(store, 'acme', ids[0] ?? '');
  const revoked: boolean = await revokeKey(store, key, { now: 0 });
  const listed = await listCustomPatterns(store, 'acme');
  const kind: 'string' | 'regex' = listed[0]!.type;
  void [removed, revoked, kind];
  // @ts-expect-error: type is "string" or "regex"
  await addCustomPatterns(store, 'acme', [{ pattern: 'x', type: 'glob' }]);
}
void admin;

const matcher: Matcher = Matcher.builtin({ minConfidence: 0.7 })
  .withPatterns([{ id: 'a', pattern: '^x$', type: 'regex', category: 'other', confidence: 0.9 }]);
const inputs: Classifiable[] = [
  new TypeError('x'),
  'message',
  { message: 'm', type: 'Error', stack: 'at x', frames: ['u'], url: 'u', userAgent: 'ua' },
  { exception: { values: [{ type: 'E', value: 'v', stacktrace: { frames: [{ filename: 'f' }] } }] } },
];
for (const input of inputs) {
  const verdict: Verdict = matcher.classify(input);
  const first: Match | undefined = verdict.matches[0];
  const field: 'message' | 'frame' | 'userAgent' | undefined = first?.field;
  const noise: boolean = matcher.isNoise(input);
  void [field, noise, toEvent(input).frames];
}
// @ts-expect-error: classify takes no numbers
matcher.classify(42);
Matcher.fromResponse('{"patterns":[]}');
Matcher.fromResponse(new Uint8Array());
Matcher.fromResponse({ patterns: [{ id: 'x', pattern: 'y' }] });
// @ts-expect-error: the constructor is not public
new Matcher();
const frames: string[] = parseStack(new Error('x').stack);
void frames;

interface SentryEvent {
  exception?: { values?: { type?: string; value?: string }[] };
  event_id: string;
}
const beforeSend: (event: SentryEvent, hint?: unknown) => SentryEvent | null = createBeforeSend<SentryEvent>(matcher);
void beforeSend;
matcher.free();

// noise-filter/init: the same API, loaded by hand (service workers).
import * as lazy from 'noise-filter/init';
async function serviceWorker(): Promise<void> {
  await lazy.init();
  await lazy.init(new URL('https://cdn.example/noise_filter_bg.wasm'));
  const handler: (request: Request) => Promise<Response> = lazy.createHandler({ keys: redisLike, customPatterns: redisLike });
  void handler;
  await lazy.init(new Uint8Array(8));
  // @ts-expect-error: a location, bytes or a module, not null
  await lazy.init(null);
}
void serviceWorker;

// noise-filter/matcher/init: the matcher entry, loaded by hand (a page that
// must not wait for the wasm before its own start-up).
import * as lazyMatcher from 'noise-filter/matcher/init';
async function pageStart(): Promise<void> {
  const ready: Promise<void> = lazyMatcher.init();
  await ready;
  const m: lazyMatcher.Matcher = lazyMatcher.Matcher.builtin();
  const noisy: boolean = m.isNoise('Googlebot/2.1');
  void noisy;
  // @ts-expect-error: a location, bytes or a module, not null
  await lazyMatcher.init(null);
}
void pageStart;

// The Sentry integration against the real SDK's types.
import type { Event as CoreEvent, Integration } from "@sentry/core";
import { noiseFilterIntegration } from 'noise-filter';
const integration: Integration = noiseFilterIntegration<CoreEvent>({
  matcher: matcher,
  mode: 'tag',
  onNoise: (verdict: Verdict, event: CoreEvent) => void [verdict, event.event_id],
});
void integration;
