// `noise-filter/matcher`: the matcher alone, over the matcher-only wasm
// (`matcher-glue.js`, made by wasm-bindgen from `noise-filter-wasm` built
// without its `handler` feature: no endpoint, no serde). The same classes and
// answers as the main entry's matcher; what differs is only where pattern
// lists are read: here JavaScript reads them (`JSON.parse`, plain property
// reads) into columns, and the core validates and compiles them as it does
// for the main entry, refusing the same patterns with the same texts. Each
// runtime's entry (matcher-node.js, …) loads the wasm, then re-exports this.
// Types: matcher.d.ts.

import * as wasm from './matcher-glue.js';
import { Classifier, responseText } from './matching.js';

export { createBeforeSend, parseStack, toEvent } from './matching.js';

/** The patterns of a compiled set, applied to error events. */
export class Matcher extends Classifier {
  #raw;

  /** Use `Matcher.builtin`, `Matcher.fromResponse` or `Matcher.fromPatterns`. */
  constructor(raw) {
    super(raw, wasm);
    this.#raw = raw;
  }

  /** The built-in catalog at or above `minConfidence` (default 0.5, as the service). */
  static builtin({ minConfidence = 0.5 } = {}) {
    return new Matcher(wasm.Matcher.builtin(minConfidence));
  }

  /** The patterns of a Variant A or B response body (text, bytes or parsed JSON). */
  static fromResponse(body) {
    const json = responseText(body);
    let parsed;
    try {
      parsed = JSON.parse(json);
    } catch (error) {
      throw new Error(`${RESPONSE.prefix}${error.message}`);
    }
    return new Matcher(wasm.Matcher.fromColumns(...columns(responsePatterns(parsed), RESPONSE)));
  }

  /** Patterns given as `{id, pattern, type?, category?, confidence?}`. */
  static fromPatterns(patterns) {
    return new Matcher(wasm.Matcher.fromColumns(...columns(sequence(patterns, VALUES), VALUES)));
  }

  /** A new matcher with these patterns added after this one's. */
  withPatterns(patterns) {
    return new Matcher(this.#raw.withColumns(...columns(sequence(patterns, VALUES), VALUES)));
  }

  /** The patterns, in order. */
  get patterns() {
    const raw = this.#raw;
    const [texts, kinds, categories, confidences] = [raw.texts(), raw.kinds(), raw.categories(), raw.confidences()];
    return raw.ids().map((id, i) => ({
      id,
      pattern: texts[i],
      type: kinds[i] === 1 ? 'regex' : 'string',
      category: categories[i],
      confidence: confidences[i],
    }));
  }
}

// ------------------------------------------------- reading pattern lists --
//
// Type conversion only, with the texts the main entry's wasm gives for the
// same values (serde-wasm-bindgen for pattern arrays, serde_json for response
// bodies; docs/NPM.md lists where they cannot be the same: serde_json's
// "at line L column C", its syntax-error wording, duplicate keys). Whether a
// pattern is valid is the core's decision, in wasm.

/** How pattern arrays given as JavaScript values are read (serde-wasm-bindgen). */
const VALUES = {
  prefix: 'invalid pattern: Error: ',
  positional: false,
  describe(value) {
    if (value === null || value === undefined) return 'unit value';
    if (typeof value === 'boolean') return `boolean \`${value}\``;
    if (typeof value === 'number') return `floating point \`${rustFloat(value)}\``;
    if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
    return `JsValue(${describeOther(value)})`;
  },
};

/** How a response body's JSON is read (serde_json, as the core reads it). */
const RESPONSE = {
  prefix: 'not a pattern list response: ',
  positional: true,
  describe(value) {
    if (value === null) return 'null';
    if (typeof value === 'boolean') return `boolean \`${value}\``;
    if (typeof value === 'number') {
      return Number.isInteger(value) && Math.abs(value) < 2 ** 64 ? `integer \`${value}\`` : `floating point \`${value}\``;
    }
    if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
    return Array.isArray(value) ? 'sequence' : 'map';
  },
};

function refuse(how, message) {
  return new Error(how.prefix + message);
}

function invalidType(how, value, expected) {
  return refuse(how, `invalid type: ${how.describe(value)}, expected ${expected}`);
}

/** The `patterns` of a parsed body (serde also reads a struct from a 1-element array). */
function responsePatterns(body) {
  let patterns;
  if (Array.isArray(body)) {
    if (body.length === 0) throw refuse(RESPONSE, 'invalid length 0, expected struct Body with 1 element');
    if (body.length > 1) throw refuse(RESPONSE, 'trailing characters');
    patterns = body[0];
  } else if (body !== null && typeof body === 'object') {
    if (!('patterns' in body)) throw refuse(RESPONSE, 'missing field `patterns`');
    patterns = body.patterns;
  } else {
    throw invalidType(RESPONSE, body, 'struct Body');
  }
  if (!Array.isArray(patterns)) throw invalidType(RESPONSE, patterns, 'a sequence');
  return patterns;
}

/** A JavaScript sequence (an array or any iterable) as an array. */
function sequence(value, how) {
  if (Array.isArray(value)) return value;
  if (value !== null && typeof value === 'object' && typeof value[Symbol.iterator] === 'function') return Array.from(value);
  throw invalidType(how, value, 'a sequence');
}

const FIELD_NAMES = ['id', 'pattern', 'type', 'category', 'confidence'];

/** Patterns as the columns `Matcher.fromColumns` takes. */
function columns(patterns, how) {
  const ids = [];
  const texts = [];
  const kinds = new Uint8Array(patterns.length);
  const categories = [];
  const confidences = new Float64Array(patterns.length);
  patterns.forEach((item, i) => {
    // `field(name)`: the value, or `MISSING`. serde-wasm-bindgen reads a
    // field that is `in` the object (an own or inherited property, even one
    // set to `undefined`); serde_json also reads a struct from an array.
    let field;
    if (how.positional && Array.isArray(item)) {
      if (item.length < 2) throw refuse(how, `invalid length ${item.length}, expected struct MatcherPattern with 5 elements`);
      if (item.length > 5) throw refuse(how, 'trailing characters');
      field = (name) => {
        const at = FIELD_NAMES.indexOf(name);
        return at < item.length ? item[at] : MISSING;
      };
    } else if (item !== null && (typeof item === 'object' || typeof item === 'function')) {
      field = (name) => (name in item ? item[name] : MISSING);
    } else {
      throw invalidType(how, item, 'struct MatcherPattern');
    }
    ids.push(text(field('id'), 'id', how, true));
    texts.push(text(field('pattern'), 'pattern', how, true));
    const type = field('type');
    if (type !== MISSING) {
      if (typeof type !== 'string') {
        // serde_json reads an enum from a string or a map only: anything else is "expected value".
        throw how === RESPONSE && (type === null || typeof type !== 'object') ? refuse(how, 'expected value') : invalidType(how, type, 'enum Kind');
      }
      if (type !== 'string' && type !== 'regex') throw refuse(how, `unknown variant \`${type}\`, expected \`string\` or \`regex\``);
      kinds[i] = type === 'regex' ? 1 : 0;
    }
    categories.push(text(field('category'), 'category', how, false) ?? '');
    const confidence = field('confidence');
    if (confidence === MISSING) {
      confidences[i] = 1;
    } else if (typeof confidence !== 'number') {
      throw invalidType(how, confidence, 'f64');
    } else if (how === RESPONSE && !Number.isFinite(confidence)) {
      // JSON.parse reads 1e400 as Infinity; serde_json refuses it.
      throw refuse(how, 'number out of range');
    } else {
      confidences[i] = confidence;
    }
  });
  return [ids, texts, kinds, categories, confidences];
}

const MISSING = Symbol('missing');

function text(value, name, how, required) {
  if (typeof value === 'string') return value;
  if (value === MISSING) {
    if (required) throw refuse(how, `missing field \`${name}\``);
    return undefined;
  }
  throw invalidType(how, value, 'a string');
}

/** An f64 as Rust's `Display` writes it in serde's messages (`5.0`, `0.5`, `NaN`, `inf`). */
function rustFloat(value) {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  const plain = Math.abs(value) >= 1e21 || (value !== 0 && Math.abs(value) < 1e-6) ? value.toLocaleString('en-US', { useGrouping: false, maximumSignificantDigits: 17 }) : String(value);
  return plain.includes('.') ? plain : `${plain}.0`;
}

function describeOther(value) {
  if (typeof value === 'bigint') return `${value}n`;
  try {
    return Array.isArray(value) ? JSON.stringify(value) : `Object(${JSON.stringify(value)})`;
  } catch {
    return String(value);
  }
}
