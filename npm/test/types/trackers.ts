// Type-level tests of the trackers' integrations against the real SDKs'
// own types (installed from the registry): each hook is accepted where its
// SDK takes it, and every `@ts-expect-error` must be an error.
import type { RumBeforeSend, RumEvent, RumEventDomainContext, RumInitConfiguration } from '@datadog/browser-rum';
import type { BrowserConfig, Event as BugsnagEvent, OnErrorCallback } from '@bugsnag/js';
import type Rollbar from 'rollbar';
import type Honeybadger from '@honeybadger-io/js';
import type { BeforeSendFn, CaptureResult, PostHogConfig } from 'posthog-js';
import {
  type Verdict,
  Matcher,
  bugsnagOnError,
  createClient,
  datadogBeforeSend,
  honeybadgerBeforeNotify,
  posthogBeforeSend,
  rollbarCheckIgnore,
} from 'noise-filter';

const matcher = Matcher.builtin();
const client = createClient({ url: 'https://filters.example', key: 'nf_x' });
const loading: Promise<Matcher> = Promise.resolve(matcher);

// Datadog RUM: the hook is a `RumBeforeSend`; with type arguments, onNoise
// and the user's own beforeSend see the SDK's event and context.
const ddHook: RumBeforeSend = datadogBeforeSend({ matcher });
const ddTyped: RumBeforeSend = datadogBeforeSend<RumEvent, RumEventDomainContext>({
  matcher: client,
  mode: 'tag',
  exclude: { categories: ['BOT_TRAFFIC'] },
  onNoise: (verdict: Verdict, event: RumEvent) => void [verdict.matches.length, event.type],
  beforeSend: (event, context) => event.type !== 'view' || context !== undefined,
});
const ddConfig: Pick<RumInitConfiguration, 'beforeSend'> = { beforeSend: ddTyped };
// @ts-expect-error: Datadog's hook has no 'keep' mode.
datadogBeforeSend({ matcher, mode: 'keep' });

// Bugsnag: an `OnErrorCallback`, in the list `onError` takes.
const bsHook: OnErrorCallback = bugsnagOnError({ matcher: loading });
const bsConfig: Pick<BrowserConfig, 'onError'> = {
  onError: [bugsnagOnError<BugsnagEvent>({ matcher, mode: 'tag', onNoise: (_verdict, event) => void event.errors[0]?.errorClass }), bsHook],
};

// Rollbar: `checkIgnore` of its configuration; no tag mode.
const rbConfig: Rollbar.Configuration = {
  checkIgnore: rollbarCheckIgnore({ matcher, checkIgnore: (isUncaught, args, item) => isUncaught && args.length > 0 && 'body' in item }),
};
// @ts-expect-error: `checkIgnore` cannot change the item: no tag mode.
rollbarCheckIgnore({ matcher, mode: 'tag' });

// Honeybadger: a `beforeNotify` handler.
type BeforeNotifyHandler = Parameters<typeof Honeybadger.beforeNotify>[0];
type Notice = NonNullable<Parameters<BeforeNotifyHandler>[0]>;
const hbHook: BeforeNotifyHandler = honeybadgerBeforeNotify<Notice>({
  matcher,
  mode: 'tag',
  onNoise: (_verdict, notice) => void notice.backtrace.length,
});

// PostHog: a `before_send` function, alone or in the list.
const phHook: BeforeSendFn = posthogBeforeSend({ matcher, onError: (error: unknown) => void error });
const phConfig: Pick<PostHogConfig, 'before_send'> = { before_send: [phHook, (event: CaptureResult | null) => event] };

export { bsConfig, ddConfig, ddHook, hbHook, phConfig, rbConfig };
