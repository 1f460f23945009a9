import assert from "node:assert/strict";
import {
  answersAnother,
  otherRequestsAnswer,
  UpstreamError,
  type UpstreamRequest,
} from "../../../src/upstream/exchange.ts";
import { errorText } from "../../../src/lib/mask.ts";

function request(id?: string, others: [string, string][] = []): UpstreamRequest {
  return {
    method: "GET",
    origin: "http://core",
    target: "/",
    headers: [...others, ...(id === undefined ? [] : [["x-request-id", id] as [string, string]])],
    timeoutMs: 1000,
    maxBytes: 1000,
  };
}

Deno.test("answersAnother() refuses an echoed X-Request-ID of another request, any case of its own passes", () => {
  const id = "99391c7e-ad88-49ec-a2ad-99ddcb1f7721";
  assert.equal(answersAnother(request(id), null), false);
  assert.equal(answersAnother(request(id), ` ${id.toUpperCase()} `), false);
  assert.equal(answersAnother(request(id), crypto.randomUUID()), true);
  assert.equal(answersAnother(request(id), `${id}, ${id}`), true);
  assert.equal(answersAnother(request(), id), true);
});

Deno.test("answersAnother() takes an answer without an echo (null or undefined) as saying nothing", () => {
  const id = crypto.randomUUID();
  assert.equal(answersAnother(request(id), undefined), false);
  assert.equal(answersAnother(request(), undefined), false);
  assert.equal(answersAnother(request(), null), false);
});

Deno.test("answersAnother() compares with the request's X-Request-ID, not another header, spaces around either ignored", () => {
  const id = crypto.randomUUID();
  const sent = request(` ${id} `, [["psu-id", "PSU-1"], ["accept", "application/json"]]);
  assert.equal(answersAnother(sent, id), false);
  assert.equal(answersAnother(sent, "PSU-1"), true);
});

Deno.test("otherRequestsAnswer() is a broken exchange whose text names the X-Request-ID", () => {
  const error = otherRequestsAnswer();
  assert.ok(error instanceof UpstreamError);
  assert.equal(error.failure, "broken");
  assert.equal(
    errorText(error),
    "UpstreamError: The upstream's answer is malformed: its X-Request-ID is another request's",
  );
});

Deno.test("UpstreamError carries its failure and its name into the log text", () => {
  const error = new UpstreamError("refused", "Connection refused", {
    cause: new Error("ECONNREFUSED"),
  });
  assert.equal(error.failure, "refused");
  assert.equal(error.name, "UpstreamError");
  assert.equal(errorText(error), "UpstreamError: Connection refused (cause: Error: ECONNREFUSED)");
});
