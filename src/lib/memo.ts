/**
 * Remembered answers of a pure function of a short string, for values that come back on request
 * after request (the peer's address, the Content-Type): the answer is worked out once instead of
 * on every request.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { memo } from "./memo.ts";
 *
 * let calls = 0;
 * const upper = memo((text) => (calls++, text.toUpperCase()));
 * assert.equal(upper("json"), "JSON");
 * assert.equal(upper("json"), "JSON");
 * assert.equal(calls, 1);
 * ```
 */

/** Keys longer than this are not remembered: a caller's long values would only fill the memory. */
export const MEMO_KEY_CHARS = 256;

/**
 * `fn` with its answers remembered, at most `max` of them. A full memo forgets them all at once,
 * so a caller sending a new value on every request costs one clear per `max` requests and never
 * more memory; `undefined` answers are remembered too.
 */
export function memo<V>(fn: (key: string) => V, max = 1024): (key: string) => V {
  const answers = new Map<string, V>();
  return (key) => {
    const known = answers.get(key);
    if (known !== undefined || answers.has(key)) return known as V;
    const value = fn(key);
    if (key.length <= MEMO_KEY_CHARS) {
      if (answers.size >= max) answers.clear();
      answers.set(key, value);
    }
    return value;
  };
}
