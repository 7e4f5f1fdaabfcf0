// The catalog's bot-traffic patterns side by side with isbot, run from the
// registry on the same inputs, as a user comparing the two would: recall on
// crawler-user-agents' example user agents, and false positives on real
// browsers (top-user-agents) and in-app browsers (fixtures/in-app-user-agents.json:
// Facebook, Instagram, TikTok, WeChat, Line, each quoted from a public
// thread). The catalog must flag at least as many examples as isbot, and no
// more real browsers. Prints the figures docs/CATALOG.md quotes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isbot } from 'isbot';
import { Matcher } from 'noise-filter/matcher';

const require = createRequire(import.meta.url);
const crawlers = require('crawler-user-agents');
const topUserAgents = require('top-user-agents');
const inApp = JSON.parse(readFileSync(new URL('../fixtures/in-app-user-agents.json', import.meta.url), 'utf8')).userAgents;

// What a user of the service gets by default: the bot-traffic patterns at the
// default threshold, applied to the user agent alone.
const builtin = Matcher.builtin();
const bots = Matcher.fromPatterns(builtin.patterns.filter((p) => p.category === 'bot-traffic'));
const catalog = (ua) => bots.isNoise({ userAgent: ua });

const examples = crawlers.flatMap((entry) => entry.instances ?? []);
const browsers = [...new Set(topUserAgents)];

function count(flags, inputs) {
  return inputs.filter((ua) => flags(ua)).length;
}

const pct = (n, d) => `${n} / ${d} = ${((100 * n) / d).toFixed(1)} %`;

test('bot recall on crawler-user-agents examples is at least isbot\'s, with no more false positives on real browsers', () => {
  const recall = { catalog: count(catalog, examples), isbot: count(isbot, examples) };
  const browserFp = { catalog: browsers.filter(catalog), isbot: browsers.filter(isbot) };
  const inAppFp = {
    catalog: inApp.filter((b) => catalog(b.userAgent)),
    isbot: inApp.filter((b) => isbot(b.userAgent)),
  };
  console.log(`crawler-user-agents examples flagged: catalog ${pct(recall.catalog, examples.length)}, isbot ${pct(recall.isbot, examples.length)}`);
  console.log(`top-user-agents flagged: catalog ${browserFp.catalog.length} / ${browsers.length}, isbot ${browserFp.isbot.length} / ${browsers.length}`);
  console.log(`in-app browsers flagged: catalog ${inAppFp.catalog.length} / ${inApp.length}, isbot ${inAppFp.isbot.length} / ${inApp.length}`);
  for (const b of inAppFp.isbot) console.log(`  isbot flags ${b.app}: ${b.userAgent}`);
  for (const b of inAppFp.catalog) console.log(`  catalog flags ${b.app}: ${b.userAgent}`);
  for (const ua of examples.filter((ua) => !catalog(ua))) console.log(`  catalog misses: ${ua}`);
  for (const ua of examples.filter((ua) => !isbot(ua))) console.log(`  isbot misses: ${ua}`);
  assert.ok(recall.catalog >= recall.isbot, `catalog ${recall.catalog} < isbot ${recall.isbot}`);
  assert.ok(
    browserFp.catalog.length + inAppFp.catalog.length <= browserFp.isbot.length + inAppFp.isbot.length,
    `catalog flags real browsers: ${[...browserFp.catalog, ...inAppFp.catalog.map((b) => b.userAgent)].join('\n')}`,
  );
});

test('a bot verdict names its sub-kind', () => {
  const verdict = builtin.classify({ userAgent: 'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)' });
  assert.equal(verdict.noise, true);
  assert.ok(verdict.matches.some((m) => m.tags.includes('ai-crawler')), JSON.stringify(verdict.matches));
  const custom = Matcher.fromPatterns([{ id: 'custom-1', pattern: 'GPTBot' }]).classify({ userAgent: 'GPTBot/1.2' });
  assert.deepEqual(custom.matches[0].tags, []);
});
