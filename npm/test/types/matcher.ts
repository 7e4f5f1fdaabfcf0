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
