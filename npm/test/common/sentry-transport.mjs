// A Sentry transport of the tests' own: Sentry's `createTransport` around a
// function that keeps the payload of every `event` item of each envelope
// instead of sending it. Used with @sentry/node and @sentry/browser alike.
import { createTransport } from '@sentry/core';

export function recordingTransport(events) {
  return (options) =>
    createTransport(options, async (request) => {
      const text = typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body);
      const lines = text.split('\n');
      for (let i = 1; i + 1 < lines.length; i += 2) {
        if (JSON.parse(lines[i]).type === 'event') events.push(JSON.parse(lines[i + 1]));
      }
      return { statusCode: 200 };
    });
}
