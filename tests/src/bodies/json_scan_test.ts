import assert from "node:assert/strict";
import { jsonProblem } from "../../../src/bodies/json_scan.ts";

Deno.test("jsonProblem() finds a repeated key with its JSON path", () => {
  assert.deepEqual(jsonProblem('{"a":1,"b":{"c":[{"d":1,"d":2}]}}', 16), {
    path: "b.c[0].d",
    problem: "must not be repeated",
  });
  assert.deepEqual(jsonProblem('{"creditorName":"A","creditorName":"B"}', 16), {
    path: "creditorName",
    problem: "must not be repeated",
  });
  // The same key once escaped and once not is the same key.
  assert.equal(jsonProblem('{"a":1,"\\u0061":2}', 16)?.problem, "must not be repeated");
  assert.equal(jsonProblem('{"a":{"x":1},"b":{"x":1}}', 16), undefined);
});

Deno.test("jsonProblem() bounds the nesting depth", () => {
  assert.equal(jsonProblem("[".repeat(5) + "]".repeat(5), 5), undefined);
  assert.equal(
    jsonProblem("[".repeat(6) + "]".repeat(6), 5)?.problem,
    "must not nest deeper than 5 levels",
  );
  const deep = "[".repeat(200_000) + "]".repeat(200_000);
  assert.equal(jsonProblem(deep, 16)?.problem, "must not nest deeper than 16 levels");
});

Deno.test("jsonProblem() finds escaped control characters in strings and keys", () => {
  assert.deepEqual(jsonProblem('{"items":[{"description":"a\\u0000b"}]}', 16), {
    path: "items[0].description",
    problem: "must not contain control characters",
  });
  assert.equal(jsonProblem('{"a":"line\\nbreak"}', 16)?.path, "a");
  assert.equal(jsonProblem('{"a":"\u0085"}', 16)?.path, "a");
  assert.equal(
    jsonProblem('{"a\\t":1}', 16)?.problem,
    "must not have control characters in its name",
  );
  assert.equal(
    jsonProblem('{"a":"quote \\" and \\\\ backslash","b":[1,true,null,-2.5e3]}', 16),
    undefined,
  );
});
