// `noise-filter/matcher`: the matcher of `noise-filter` alone, over its own,
// smaller wasm (no endpoint). The same API and answers as the main entry's
// matcher; the types are the main entry's.
export {
  DEFAULT_HOLD_MS,
  Matcher,
  createBeforeSend,
  createClient,
  init,
  noiseFilterIntegration,
  parseStack,
  toEvent,
} from './index.js';
export type {
  BeforeSendOptions,
  Exclusions,
  FirstParty,
  MatcherSource,
  NoiseFilterIntegration,
  Classifiable,
  Client,
  ClientOptions,
  RefreshOutcome,
  NoiseFilterIntegrationOptions,
  EventInput,
  Match,
  Pattern,
  PatternInput,
  PatternType,
  SentryLikeEvent,
  Verdict,
} from './index.js';
