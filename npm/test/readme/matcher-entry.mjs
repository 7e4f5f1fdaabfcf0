import { Matcher, createBeforeSend, parseStack } from 'noise-filter/matcher';

// The same Matcher, over a wasm without the endpoint: what a page downloads.
const matcher = Matcher.builtin();
console.log(matcher.isNoise({ message: 'x', frames: parseStack('f@moz-extension://abc/content.js:1:2') })); // true

const beforeSend = createBeforeSend(matcher);
console.log(beforeSend({ message: 'TypeError: cart.items is undefined' }) !== null); // true: a real error is kept
