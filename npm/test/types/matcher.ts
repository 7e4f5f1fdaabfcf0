// `noise-filter/matcher` as a user's TypeScript sees it: the main entry's
// matcher types, and nothing of the handler.
import { Matcher, createBeforeSend, parseStack, toEvent, type Verdict, type PatternInput } from 'noise-filter/matcher';
import * as entry from 'noise-filter/matcher';

const own: PatternInput[] = [{ id: 'mine', pattern: 'my noise', type: 'string', confidence: 0.9 }];
const matcher: Matcher = Matcher.builtin({ minConfidence: 0.5 }).withPatterns(own);
const verdict: Verdict = matcher.classify(new Error('x'));
const frames: string[] = parseStack(new Error('y').stack);
const noise: boolean = matcher.isNoise(toEvent({ message: 'z', frames }));
const hook = createBeforeSend(matcher, { onNoise: (v: Verdict) => v.matches.length });
hook({ message: 'x' });
void verdict;
void noise;

// @ts-expect-error: the matcher entry has no handler
entry.createHandler;
// @ts-expect-error: nor store helpers
entry.MemoryStore;

// A client of a running service, from the matcher entry.
import { createClient, type Client, type RefreshOutcome } from 'noise-filter/matcher';
async function consume(): Promise<void> {
  const client: Client = createClient({ url: 'https://filters.example.com', key: 'nf_live_x', minConfidence: 0.8, onError: (e: unknown) => void e });
  await client.ready;
  const outcome: RefreshOutcome = await client.refresh();
  const next: number | undefined = outcome.next;
  const noisy: boolean = client.isNoise(new Error('boom'));
  const current: Matcher = client.matcher;
  const etag: string | undefined = client.set?.etag;
  void [next, noisy, current, etag];
  // @ts-expect-error: the variant is 'v1' or 'api'
  createClient({ url: 'https://filters.example.com', key: 'k', variant: 'v2' });
  client.close();
}
void consume;

// Exclusions, the fail-soft loading and the page-load hold.
import { DEFAULT_HOLD_MS, init, noiseFilterIntegration, type Exclusions, type MatcherSource } from 'noise-filter/matcher';
async function page(): Promise<void> {
  const loading: Promise<void> = init();
  await loading.catch((why: unknown) => void why);
  const e2e: Exclusions = { ids: ['headless-chrome'], categories: ['BOT_TRAFFIC'] };
  const narrowed: Matcher = Matcher.builtin({ exclude: e2e }).excluding({ categories: ['custom'] });
  // @ts-expect-error: exclusions are lists of strings
  Matcher.builtin({ exclude: { ids: [1] } });
  const proxied: Client = createClient({ url: '/noise-filter', key: null, exclude: e2e });
  // @ts-expect-error: the key is required: a string, or null when a proxy adds it
  createClient({ url: '/noise-filter' });
  const sources: MatcherSource[] = [narrowed, proxied, init().then(() => Matcher.builtin())];
  const hold: number = DEFAULT_HOLD_MS;
  for (const matcher of sources) {
    noiseFilterIntegration({ matcher, hold, exclude: e2e, onError: (error: unknown) => void error });
    createBeforeSend(matcher, { exclude: e2e, onError: (error: unknown) => void error });
  }
  // @ts-expect-error: hold is a number of milliseconds
  noiseFilterIntegration({ matcher: proxied, hold: '6s' });
}
void page;

// The first-party rule: the same option everywhere `exclude` goes.
import type { FirstParty } from 'noise-filter/matcher';
function firstParty(body: string): void {
  const mine: FirstParty = { origins: ['https://shop.example.com'], paths: ['/static/app/'] };
  const ruled: Matcher = Matcher.builtin({ firstParty: mine }).withFirstParty({ origins: ['app://'] });
  const fetched: Matcher = Matcher.fromResponse(body, { firstParty: mine });
  const client: Client = createClient({ url: '/noise-filter', key: null, firstParty: mine });
  noiseFilterIntegration({ matcher: client, firstParty: mine });
  createBeforeSend(fetched, { firstParty: mine, exclude: { ids: ['headless-chrome'] } });
  void ruled;
  // @ts-expect-error: origins are strings
  Matcher.builtin({ firstParty: { origins: [new URL('https://shop.example.com')] } });
  // @ts-expect-error: the option's lists are origins and paths
  Matcher.builtin({ firstParty: { hosts: ['shop.example.com'] } });
}
void firstParty;
