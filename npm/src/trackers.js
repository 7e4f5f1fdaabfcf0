// The integrations for the error trackers other than Sentry (Datadog Browser
// RUM, Bugsnag, Rollbar, Honeybadger, PostHog): each is a hook in the form
// its SDK takes, made of two thin parts over the one decision of matching.js
// (`noiseJudge`): a reader of the SDK's event into the matcher's event
// `{type, message, frames, userAgent}` (docs/CONTRACT.md, "Reading a
// tracker's event"), and the SDK's way to drop or tag. None holds an event:
// while the matcher loads, events pass (every hook here answers at once).
// Each fails open: an event it cannot read, or a matcher that throws, keeps
// the event and tells `onError`; none throws into the SDK (Rollbar removes
// a `checkIgnore` that throws, Honeybadger does not catch its handlers).
// Every export is a plain function: a bundle keeps only those it imports.

import { noiseJudge, parseStack, patternIds } from './matching.js';

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);
const stringOf = (value) => (typeof value === 'string' ? value : undefined);

/** Why an event is not read: the reader's refusal, told to `onError`. */
class UnreadableEvent extends TypeError {
  constructor(tracker, why) {
    super(`noise-filter: cannot read this ${tracker} event: ${why}`);
    this.name = 'UnreadableEvent';
  }
}

/** The first `User-Agent` header, any case, of an object of headers. */
function userAgentHeader(headers) {
  if (!isObject(headers)) return undefined;
  return Object.entries(headers).find(([name, value]) => name.toLowerCase() === 'user-agent' && typeof value === 'string')?.[1];
}

/** The non-empty strings of `list` (each item through `fileOf`), in order. */
function filesOf(list, fileOf) {
  return (Array.isArray(list) ? list : []).map((frame) => isObject(frame) && fileOf(frame)).filter((file) => typeof file === 'string' && file !== '');
}

/** `mode`: 'drop' (default) or, for an SDK that can carry them, 'tag'. */
function modeOf(name, mode, tags) {
  if (mode === 'drop' || (tags && mode === 'tag')) return mode;
  throw new TypeError(`${name}: mode is 'drop'${tags ? " or 'tag'" : ''}`);
}

/**
 * One tracker's hook: `read(event)` gives the matcher's event, `undefined`
 * for an event that is not an error (it passes unread), or throws
 * `UnreadableEvent`. Returns `(event, hint) => verdict | null` (null: keep).
 */
function trackerJudge(name, options, read) {
  const { judge, report } = noiseJudge(name, options);
  return (event, hint) => {
    let input;
    try {
      input = read(event);
    } catch (error) {
      report(error);
      return null;
    }
    return input === undefined ? null : judge(input, event, hint);
  };
}

// ------------------------------------------------------- Datadog RUM --

/**
 * A Datadog RUM error event (`type: 'error'`) as the matcher reads it:
 * `error.type`, `error.message`, the script URLs of `error.stack`. The
 * event has no user agent (the intake takes it from the request), so it is
 * the browser's own, `navigator.userAgent`, which the SDK runs in.
 */
export function readDatadogEvent(event) {
  if (!isObject(event)) throw new UnreadableEvent('Datadog RUM', 'not an object');
  if (event.type !== 'error') return undefined;
  const error = event.error;
  if (!isObject(error)) throw new UnreadableEvent('Datadog RUM', '`error` is not an object');
  return {
    type: stringOf(error.type),
    message: stringOf(error.message),
    frames: parseStack(error.stack),
    userAgent: stringOf(globalThis.navigator?.userAgent),
  };
}

/**
 * `datadogRum.init({ beforeSend: datadogBeforeSend({ matcher }) })`: false
 * (drop) for a noisy error event; with `mode: 'tag'` the event is kept
 * with `context.noise_filter` = `{ noise: true, patterns }`. The user's own
 * `beforeSend` runs after the filter, on the events it keeps.
 */
export function datadogBeforeSend({ mode = 'drop', beforeSend, ...options } = {}) {
  const name = 'datadogBeforeSend';
  modeOf(name, mode, true);
  const decide = trackerJudge(name, options, readDatadogEvent);
  return function noiseFilterBeforeSend(event, context) {
    const verdict = decide(event, context);
    if (verdict !== null) {
      if (mode === 'drop') return false;
      event.context = { ...event.context, noise_filter: { noise: true, patterns: patternIds(verdict) } };
    }
    return beforeSend === undefined ? true : beforeSend(event, context);
  };
}

// ----------------------------------------------------------- Bugsnag --

/**
 * A Bugsnag event as the matcher reads it: the thrown error is the first
 * of `errors` (Bugsnag lists it before its causes); its `errorClass`,
 * `errorMessage`, each `stacktrace` frame's `file`; `device.userAgent`
 * (browsers), else the `User-Agent` of `request.headers` (Node).
 */
export function readBugsnagEvent(event) {
  if (!isObject(event)) throw new UnreadableEvent('Bugsnag', 'not an object');
  const errors = event.errors;
  if (!Array.isArray(errors) || !isObject(errors[0])) throw new UnreadableEvent('Bugsnag', '`errors` holds no error');
  const thrown = errors[0];
  return {
    type: stringOf(thrown.errorClass),
    message: stringOf(thrown.errorMessage),
    frames: filesOf(thrown.stacktrace, (frame) => frame.file),
    userAgent: stringOf(event.device?.userAgent) ?? userAgentHeader(event.request?.headers),
  };
}

/**
 * `Bugsnag.start({ onError: [bugsnagOnError({ matcher }), yours] })`: false
 * (Bugsnag drops the event and runs no later callback) for noise; with
 * `mode: 'tag'` the event is kept with the metadata section `noise_filter`
 * = `{ noise: true, patterns }`.
 */
export function bugsnagOnError({ mode = 'drop', ...options } = {}) {
  const name = 'bugsnagOnError';
  modeOf(name, mode, true);
  const decide = trackerJudge(name, options, readBugsnagEvent);
  return function noiseFilterOnError(event) {
    const verdict = decide(event);
    if (verdict === null) return true;
    if (mode === 'drop') return false;
    try {
      event.addMetadata('noise_filter', { noise: true, patterns: patternIds(verdict) });
    } catch {
      /* not a Bugsnag event object: kept untagged */
    }
    return true;
  };
}

// ----------------------------------------------------------- Rollbar --

/**
 * A Rollbar item (`checkIgnore`'s third argument) as the matcher reads it:
 * `body.trace`, else the first of `body.trace_chain` (the thrown error,
 * before its causes): its `exception.class`, `exception.message` and each
 * frame's `filename`; else `body.message.body`. The user agent: the
 * browser's (`client.javascript.browser`), else the `User-Agent` of
 * `request.headers` (Node).
 */
export function readRollbarItem(item) {
  if (!isObject(item) || !isObject(item.body)) throw new UnreadableEvent('Rollbar', 'no `body`');
  const body = item.body;
  const trace = isObject(body.trace) ? body.trace : Array.isArray(body.trace_chain) && isObject(body.trace_chain[0]) ? body.trace_chain[0] : undefined;
  const userAgent = stringOf(item.client?.javascript?.browser) ?? userAgentHeader(item.request?.headers);
  if (trace === undefined) {
    if (!isObject(body.message)) throw new UnreadableEvent('Rollbar', '`body` has no trace and no message');
    return { message: stringOf(body.message.body), frames: [], userAgent };
  }
  const exception = isObject(trace.exception) ? trace.exception : {};
  return {
    type: stringOf(exception.class),
    message: stringOf(exception.message),
    frames: filesOf(trace.frames, (frame) => frame.filename),
    userAgent,
  };
}

/**
 * `new Rollbar({ checkIgnore: rollbarCheckIgnore({ matcher }) })`: true
 * (Rollbar ignores the item) for noise. `checkIgnore` answers only yes or
 * no, so there is no tag mode. The user's own `checkIgnore` runs after the
 * filter, on the items it keeps.
 */
export function rollbarCheckIgnore({ mode = 'drop', checkIgnore, ...options } = {}) {
  const name = 'rollbarCheckIgnore';
  modeOf(name, mode, false);
  const decide = trackerJudge(name, options, readRollbarItem);
  return function noiseFilterCheckIgnore(isUncaught, args, item) {
    if (decide(item, args) !== null) return true;
    return checkIgnore === undefined ? false : checkIgnore(isUncaught, args, item);
  };
}

// ------------------------------------------------------- Honeybadger --

/**
 * A Honeybadger notice as the matcher reads it: `name`, `message`, each
 * `backtrace` frame's `file` (else the script URLs of `stack`);
 * `cgiData.HTTP_USER_AGENT` (browsers), else the `User-Agent` of
 * `headers`.
 */
export function readHoneybadgerNotice(notice) {
  if (!isObject(notice)) throw new UnreadableEvent('Honeybadger', 'not an object');
  const frames = Array.isArray(notice.backtrace) ? filesOf(notice.backtrace, (frame) => frame.file) : parseStack(notice.stack);
  return {
    type: stringOf(notice.name),
    message: stringOf(notice.message),
    frames,
    userAgent: stringOf(notice.cgiData?.HTTP_USER_AGENT) ?? userAgentHeader(notice.headers),
  };
}

/**
 * `Honeybadger.beforeNotify(honeybadgerBeforeNotify({ matcher }))`: false
 * (Honeybadger does not send the notice) for noise; with `mode: 'tag'` the
 * notice is sent with the tag `noise_filter` and `context.noise_filter` =
 * `{ noise: true, patterns }`. Honeybadger runs every `beforeNotify`
 * handler, the user's too, whatever the others answer.
 */
export function honeybadgerBeforeNotify({ mode = 'drop', ...options } = {}) {
  const name = 'honeybadgerBeforeNotify';
  modeOf(name, mode, true);
  const decide = trackerJudge(name, options, readHoneybadgerNotice);
  return function noiseFilterBeforeNotify(notice) {
    const verdict = decide(notice);
    if (verdict === null) return true;
    if (mode === 'drop') return false;
    const tags = Array.isArray(notice.tags) ? notice.tags : typeof notice.tags === 'string' && notice.tags !== '' ? notice.tags.split(/\s*,\s*/) : [];
    notice.tags = [...tags, 'noise_filter'];
    notice.context = { ...notice.context, noise_filter: { noise: true, patterns: patternIds(verdict) } };
    return true;
  };
}

// ----------------------------------------------------------- PostHog --

/**
 * A PostHog `$exception` event as the matcher reads it (any other event
 * passes unread): the thrown exception is the first of
 * `properties.$exception_list` (PostHog lists it before its causes): its
 * `type`, `value`, each `stacktrace.frames` frame's `abs_path`, else its
 * `filename` (Sentry's rule); `properties.$raw_user_agent`.
 */
export function readPosthogEvent(event) {
  if (!isObject(event)) throw new UnreadableEvent('PostHog', 'not an object');
  if (event.event !== '$exception') return undefined;
  const list = event.properties?.$exception_list;
  if (!Array.isArray(list) || !isObject(list[0])) throw new UnreadableEvent('PostHog', '`properties.$exception_list` holds no exception');
  const thrown = list[0];
  return {
    type: stringOf(thrown.type),
    message: stringOf(thrown.value),
    frames: filesOf(thrown.stacktrace?.frames, (frame) => frame.abs_path ?? frame.filename),
    userAgent: stringOf(event.properties.$raw_user_agent),
  };
}

/**
 * `posthog.init(token, { before_send: [posthogBeforeSend({ matcher }), yours] })`:
 * null (PostHog drops the event and runs no later function) for a noisy
 * `$exception` event; with `mode: 'tag'` it is kept with the properties
 * `noise_filter: true` and `noise_filter_patterns`.
 */
export function posthogBeforeSend({ mode = 'drop', ...options } = {}) {
  const name = 'posthogBeforeSend';
  modeOf(name, mode, true);
  const decide = trackerJudge(name, options, readPosthogEvent);
  return function noiseFilterBeforeSend(event) {
    const verdict = decide(event);
    if (verdict === null) return event;
    if (mode === 'drop') return null;
    event.properties = { ...event.properties, noise_filter: true, noise_filter_patterns: patternIds(verdict) };
    return event;
  };
}
