import assert from "node:assert/strict";
import { startGateway } from "../../support/gateway.ts";
import { startUpstream } from "../../support/upstream.ts";
import { DEFAULT_POLICY } from "../../support/gateway.ts";
import { initiationHeaders, singlePayment } from "../../support/requests.ts";
import { UUID } from "../../../src/lib/ids.ts";

const ID = "0D9E7F6A-5B4C-4D3E-8F2A-1B0C9D8E7F6A";

Deno.test("accessLog() answers with a UUID X-Request-ID it makes when the request had none or an invalid one", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: DEFAULT_POLICY, upstream: upstream.url });
  const initiate = (id: string | undefined) => {
    const headers = initiationHeaders();
    if (id === undefined) delete headers["x-request-id"];
    else headers["x-request-id"] = id;
    return { method: "POST", headers, body: JSON.stringify(singlePayment()) };
  };
  const cases: [string, RequestInit, number, RegExp | undefined][] = [
    // Where the interface requires it: 400, and the text says what was wrong.
    ["missing", initiate(undefined), 400, /^Header "X-Request-ID" is required for this operation$/],
    ["empty", initiate(""), 400, /is required for this operation \(it was sent empty\)$/],
    ["not a UUID", initiate("req-42"), 400, /must be a UUID like .*, not "req-42"$/],
    ["overlong", initiate("x".repeat(300)), 400, /not "x{40}\.\.\."$/],
    // Where it is optional (the product catalogue): the answer still carries one.
    ["optional", {}, 200, undefined],
    // Not found: the answer carries one too.
    ["unknown path", {}, 404, undefined],
  ];
  for (const [name, init, status, text] of cases) {
    const path = name === "optional"
      ? "/v1/products/en"
      : name === "unknown path"
      ? "/v9/nothing"
      : "/v1/payments/domestic";
    const before = gateway.log.lines.length;
    const response = await gateway.fetch(path, init);
    const body = await response.text();
    assert.equal(response.status, status, `${name}: ${body}`);
    const answered = response.headers.get("x-request-id") ?? "";
    assert.match(answered, UUID, name);
    if (text) assert.match(JSON.parse(body).tppMessages[0].text, text, name);
    const line = gateway.log.lines.slice(before).find((l) => l.status === status);
    assert.equal(line?.request_id, answered, `${name}: the log line names the answer's id`);
  }
  // Each answer made its own.
  const a = await gateway.fetch("/v1/products/en");
  const b = await gateway.fetch("/v1/products/en");
  await a.body?.cancel();
  await b.body?.cancel();
  assert.notEqual(a.headers.get("x-request-id"), b.headers.get("x-request-id"));
});

Deno.test("accessLog() echoes a request's UUID as sent, on success and on error", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: DEFAULT_POLICY, upstream: upstream.url });
  const ok = await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers: initiationHeaders({ "x-request-id": ID }),
    body: JSON.stringify(singlePayment()),
  });
  await ok.body?.cancel();
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get("x-request-id"), ID);
  const bad = await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers: initiationHeaders({ "x-request-id": crypto.randomUUID(), "psu-ip-address": "x" }),
    body: "{}",
  });
  const id = bad.headers.get("x-request-id");
  await bad.body?.cancel();
  assert.equal(bad.status, 400);
  assert.match(id ?? "", UUID);
  assert.ok(gateway.log.lines.some((l) => l.request_id === id && l.status === 400));
});
