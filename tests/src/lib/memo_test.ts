import assert from "node:assert/strict";
import { memo, MEMO_KEY_CHARS } from "../../../src/lib/memo.ts";

/** A function that counts its calls, and its memo. */
function counted(max?: number) {
  const seen: string[] = [];
  const fn = memo((key) => {
    seen.push(key);
    return key === "none" ? undefined : key.length;
  }, max);
  return { fn, seen };
}

Deno.test("memo() works an answer out once per key, undefined answers included", () => {
  const { fn, seen } = counted();
  assert.equal(fn("abc"), 3);
  assert.equal(fn("abc"), 3);
  assert.equal(fn("none"), undefined);
  assert.equal(fn("none"), undefined);
  assert.equal(fn("de"), 2);
  assert.deepEqual(seen, ["abc", "none", "de"]);
});

Deno.test("memo() holds at most max answers: a full memo forgets them all", () => {
  const { fn, seen } = counted(3);
  for (const key of ["a", "b", "c"]) fn(key);
  fn("a");
  assert.deepEqual(seen, ["a", "b", "c"]);
  fn("d"); // the fourth key: the memo starts again with it alone
  fn("d");
  fn("a");
  assert.deepEqual(seen, ["a", "b", "c", "d", "a"]);
});

Deno.test("memo() does not remember keys longer than MEMO_KEY_CHARS", () => {
  const { fn, seen } = counted();
  const long = "x".repeat(MEMO_KEY_CHARS + 1);
  const edge = "y".repeat(MEMO_KEY_CHARS);
  assert.equal(fn(long), MEMO_KEY_CHARS + 1);
  assert.equal(fn(long), MEMO_KEY_CHARS + 1);
  fn(edge);
  fn(edge);
  assert.deepEqual(seen, [long, long, edge]);
});
