// A few assertions that run in every runtime, browsers included (node:assert
// does not bundle for a page).

export class AssertionError extends Error {
  name = 'AssertionError';
}

export function ok(value, message = 'expected a truthy value') {
  if (!value) throw new AssertionError(message);
}

export function equal(actual, expected, message = '') {
  if (!Object.is(actual, expected)) {
    throw new AssertionError(`${message}${message ? ': ' : ''}expected ${show(expected)}, got ${show(actual)}`);
  }
}

/** Structural equality of JSON-like values; the message names the first difference. */
export function deepEqual(actual, expected, message = '') {
  const difference = differ(actual, expected, '$');
  if (difference !== null) throw new AssertionError(`${message}${message ? ': ' : ''}${difference}`);
}

export async function rejects(promise, pattern, message = 'expected a rejection') {
  try {
    await promise;
  } catch (error) {
    if (pattern && !pattern.test(String(error?.message ?? error))) {
      throw new AssertionError(`${message}: ${String(error?.message ?? error)} does not match ${pattern}`);
    }
    return error;
  }
  throw new AssertionError(message);
}

export function throws(fn, pattern, message = 'expected an exception') {
  try {
    fn();
  } catch (error) {
    if (pattern && !pattern.test(String(error?.message ?? error))) {
      throw new AssertionError(`${message}: ${String(error?.message ?? error)} does not match ${pattern}`);
    }
    return error;
  }
  throw new AssertionError(message);
}

function differ(a, b, path) {
  if (Object.is(a, b)) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return `at ${path}: expected ${show(b)}, got ${show(a)}`;
  }
  if (Array.isArray(a) !== Array.isArray(b)) return `at ${path}: array against object`;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    if (a[key] === undefined && b[key] === undefined) continue;
    const inner = differ(a[key], b[key], `${path}.${key}`);
    if (inner !== null) return inner;
  }
  return null;
}

function show(value) {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
