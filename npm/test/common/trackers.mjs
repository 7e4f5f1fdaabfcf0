// One event of the matcher (`{type, message, frames, userAgent}`) written as
// each tracker's SDK hands it to its hook, and each integration's hook with
// the way it answers "drop". The parity test (node/trackers.test.mjs) runs
// the evaluation set and the shared fixtures' events through every
// integration and compares the verdicts with the matcher's own.
// `setUserAgent` sets the browser's user agent, which the Datadog reader
// takes (a RUM event carries none).

/** A V8 stack of `frames`, as `Error.stack` writes it. */
const stackOf = ({ type, message, frames }) =>
  [`${type ?? 'Error'}: ${message ?? ''}`.replace(/\n/g, ' '), ...(frames ?? []).map((url) => `    at f (${url}:1:1)`)].join('\n');

/** `{ name, hook(nf, options), write(event), dropped(answer), setUserAgent? }` per integration. */
export const trackers = [
  {
    name: 'Sentry (noiseFilterIntegration)',
    hook: (nf, options) => nf.noiseFilterIntegration({ ...options, hold: 0 }).processEvent,
    write: ({ type, message, frames, userAgent }) => ({
      event_id: '0'.repeat(32),
      exception: { values: [{ type, value: message, stacktrace: { frames: (frames ?? []).map((filename) => ({ filename })) } }] },
      request: userAgent === undefined ? {} : { headers: { 'User-Agent': userAgent } },
    }),
    call: (hook, event) => hook(event, {}),
    dropped: (answer) => answer === null,
  },
  {
    name: 'Datadog RUM (datadogBeforeSend)',
    hook: (nf, options) => nf.datadogBeforeSend(options),
    write: (event) => ({ type: 'error', error: { type: event.type, message: event.message, stack: stackOf(event), source: 'source' } }),
    call: (hook, event) => hook(event, {}),
    dropped: (answer) => answer === false,
    browserUserAgent: true,
  },
  {
    name: 'Bugsnag (bugsnagOnError)',
    hook: (nf, options) => nf.bugsnagOnError(options),
    write: ({ type, message, frames, userAgent }) => ({
      errors: [{ errorClass: type, errorMessage: message, stacktrace: (frames ?? []).map((file) => ({ file })), type: 'browserjs' }],
      device: { userAgent },
      addMetadata() {},
    }),
    call: (hook, event) => hook(event),
    dropped: (answer) => answer === false,
  },
  {
    name: 'Rollbar (rollbarCheckIgnore)',
    hook: (nf, options) => nf.rollbarCheckIgnore(options),
    write: ({ type, message, frames, userAgent }) => ({
      body: { trace: { exception: { class: type, message }, frames: (frames ?? []).map((filename) => ({ filename })) } },
      client: { javascript: { browser: userAgent } },
    }),
    call: (hook, item) => hook(false, [], item),
    dropped: (answer) => answer === true,
  },
  {
    name: 'Honeybadger (honeybadgerBeforeNotify)',
    hook: (nf, options) => nf.honeybadgerBeforeNotify(options),
    write: ({ type, message, frames, userAgent }) => ({
      name: type,
      message,
      backtrace: (frames ?? []).map((file) => ({ file, method: 'f', number: 1, column: 1 })),
      cgiData: { HTTP_USER_AGENT: userAgent },
      tags: [],
      context: {},
    }),
    call: (hook, notice) => hook(notice),
    dropped: (answer) => answer === false,
  },
  {
    name: 'PostHog (posthogBeforeSend)',
    hook: (nf, options) => nf.posthogBeforeSend(options),
    write: ({ type, message, frames, userAgent }) => ({
      uuid: '0',
      event: '$exception',
      properties: {
        $exception_list: [{ type, value: message, stacktrace: { type: 'raw', frames: (frames ?? []).map((filename) => ({ filename, platform: 'web:javascript' })) } }],
        $raw_user_agent: userAgent,
      },
    }),
    call: (hook, event) => hook(event),
    dropped: (answer) => answer === null,
  },
];
