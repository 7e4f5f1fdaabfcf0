import { Matcher } from 'noise-filter';

// The pattern list of any deployment (Variant A or B), with your account's
// custom patterns; cache it for 5 to 15 minutes.
const response = await fetch(`${process.env.NOISE_FILTER_URL}/v1/filters`, {
  headers: { Authorization: `Bearer ${process.env.NOISE_FILTER_KEY}` },
});
const matcher = Matcher.fromResponse(await response.text())
  .withPatterns([{ id: 'our-flaky-cdn', pattern: 'cdn.example.com/legacy/', category: 'network-issue' }]);

console.log(matcher.isNoise({ message: 'x', frames: ['https://shop.example/legacy-widget.js'] })); // true: acme's custom pattern
console.log(matcher.isNoise({ message: 'x', url: 'https://cdn.example.com/legacy/app.js' })); // true: our own
