import assert from "node:assert/strict";
import {
  type Answer,
  answerJson,
  answerText,
  changed,
  errorAnswer,
  failureAnswer,
  madeAnswer,
  toResponse,
} from "../../../src/core/answer.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";

const made: Answer = {
  status: 200,
  headers: [["content-type", "Application/JSON; charset=UTF-8"], ["x-request-id", "core's"]],
  body: new TextEncoder().encode('{"a":1}'),
  source: "core",
};

Deno.test("toResponse() puts the headers decided for the request in place of the answer's own, and nosniff on every answer", async () => {
  const response = toResponse(
    { ...made, headers: [...made.headers, ["x-content-type-options", "sniff"]] },
    [["x-request-id", "gateway's"]],
  );
  assert.equal(response.headers.get("x-request-id"), "gateway's");
  assert.equal(response.headers.get("x-content-type-options"), "nosniff");
  assert.equal(await response.text(), '{"a":1}');
});

Deno.test("toResponse() leaves out every header of the answer the request decided, not only the first", () => {
  const response = toResponse(
    {
      ...made,
      headers: [["x-request-id", "core's"], ["ratelimit", "core's"], ["ratelimit", "again"]],
    },
    [["x-request-id", "gateway's"], ["ratelimit", "gateway's"]],
  );
  assert.equal(response.headers.get("x-request-id"), "gateway's");
  assert.equal(response.headers.get("ratelimit"), "gateway's");
});

Deno.test("toResponse() sends no body with 204, 205 and 304, nor an empty one", async () => {
  for (const status of [204, 205, 304]) {
    const response = toResponse({ ...made, status });
    assert.equal(response.body, null, String(status));
  }
  assert.equal(toResponse({ ...made, body: "" }).body, null);
  assert.equal(await toResponse({ ...made, body: "x" }).text(), "x");
});

Deno.test("toResponse() gives a text body the answer's content type alone, and text/plain only without one", () => {
  const text = { ...made, body: '{"a":1}' };
  assert.deepEqual(
    [...toResponse(text).headers].filter(([name]) => name === "content-type"),
    [["content-type", "Application/JSON; charset=UTF-8"]],
  );
  const decided = toResponse({ ...text, headers: [] }, [["content-type", "application/json"]]);
  assert.equal(decided.headers.get("content-type"), "application/json");
  assert.equal(
    toResponse({ ...text, headers: [] }).headers.get("content-type"),
    "text/plain;charset=UTF-8",
  );
  assert.equal(toResponse({ ...made, headers: [] }).headers.get("content-type"), null);
});

Deno.test("changed() remembers the answer as it was made, through every change", () => {
  const once = changed(made, { body: "one" });
  const twice = changed(once, { status: 201 });
  assert.equal(madeAnswer(twice), made);
  assert.equal(madeAnswer(made), made);
  assert.equal(twice.body, "one");
  assert.equal(twice.status, 201);
});

Deno.test("answerJson() parses a body whose media type is JSON in any case, and nothing else", () => {
  assert.deepEqual(answerJson(made), { a: 1 });
  assert.equal(answerJson({ ...made, headers: [["content-type", "text/plain"]] }), undefined);
  assert.equal(answerJson({ ...made, body: "{not json" }), undefined);
  assert.equal(answerText({ ...made, body: new Uint8Array([0xff, 0xfe]) }), undefined);
});

Deno.test("errorAnswer() is the Berlin Group body with the error's own headers; failureAnswer() hides unknown errors", () => {
  const error = new GatewayError(429, "ACCESS_EXCEEDED", "Too many", {
    headers: { "Retry-After": "3" },
  });
  const answer = errorAnswer(error);
  assert.equal(answer.status, 429);
  assert.equal(answer.source, "gateway");
  assert.deepEqual(answer.headers[0], ["retry-after", "3"]);
  assert.equal(JSON.parse(answer.body as string).tppMessages[0].code, "ACCESS_EXCEEDED");
  const hidden = failureAnswer(new Error("secret at core.internal"));
  assert.equal(hidden.status, 500);
  assert.ok(!(hidden.body as string).includes("core.internal"));
});
