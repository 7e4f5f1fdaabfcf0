import { Matcher, createBeforeSend } from 'noise-filter';

// The built-in catalog (confidence ≥ 0.5, as the service serves it by default).
const matcher = Matcher.builtin();

// An Error: its type, message and the script URLs of its stack are matched.
const error = new TypeError("Cannot read properties of undefined (reading 'sendMessage')");
error.stack = `${error}\n    at inject (chrome-extension://abcdefghijklmnopabcdefghijklmnop/content.js:1:20)`;
console.log(matcher.classify(error));
// { noise: true, matches: [ { id: 'chrome-extension-url', category: 'browser-extension', tags: ['extension-url'], confidence: 0.97, field: 'frame', index: 0 } ] }

// A message, or what your error tracker has: message, type, stack, frames, url, userAgent.
console.log(matcher.isNoise('TypeError: cart.items is undefined')); // false
console.log(matcher.isNoise({ message: 'Script error.', userAgent: 'Mozilla/5.0 (compatible; bingbot/2.0)' })); // true

// Plug it into an SDK's hook: Sentry.init({ dsn, beforeSend }) drops the noise.
const beforeSend = createBeforeSend(matcher, {
  onNoise: (verdict) => console.log('dropped:', verdict.matches.map((m) => m.id).join(', ')),
});
beforeSend({ exception: { values: [{ type: 'TypeError', value: 'Failed to fetch' }] } }); // null
