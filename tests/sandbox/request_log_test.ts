import assert from "node:assert/strict";
import { createSandbox } from "../../src/sandbox/mod.ts";
import { MAX_RECORDED_BODY, MAX_RECORDED_REQUESTS } from "../../src/sandbox/state.ts";
import { send, sendJson } from "./helpers.ts";

Deno.test("recordRequests() keeps interface requests with headers, body and status, not the SCA page or controls", async () => {
  const app = createSandbox();
  await send(app, "/psd2/v1/consents?x=1", {
    method: "POST",
    headers: { "X-Request-ID": "id-1" },
    body: "{",
  });
  await send(app, "/sca/whatever");
  await send(app, "/sandbox/users");
  const log = await sendJson(app, "/sandbox/requests");
  assert.equal(log.body.requests.length, 1);
  const [entry] = log.body.requests;
  assert.equal(entry.method, "POST");
  assert.equal(entry.target, "/psd2/v1/consents?x=1");
  assert.equal(entry.headers["x-request-id"], "id-1");
  assert.equal(entry.body, "{");
  assert.equal(entry.status, 400);
});

Deno.test("recordRequests() cuts long bodies and keeps only the last requests", async () => {
  const app = createSandbox();
  await send(app, "/psd2/v1/consents", {
    method: "POST",
    body: "x".repeat(MAX_RECORDED_BODY + 10),
  });
  for (let i = 0; i < MAX_RECORDED_REQUESTS; i++) await send(app, `/psd2/v1/accounts?i=${i}`);
  const log = await sendJson(app, `/sandbox/requests?limit=${MAX_RECORDED_REQUESTS + 50}`);
  assert.equal(log.body.requests.length, MAX_RECORDED_REQUESTS);
  assert.equal(log.body.requests[0].target, `/psd2/v1/accounts?i=${MAX_RECORDED_REQUESTS - 1}`);
  assert.ok(!log.body.requests.some((r: { method: string }) => r.method === "POST"));
  const fresh = createSandbox();
  await send(fresh, "/psd2/v1/consents", {
    method: "POST",
    body: "x".repeat(MAX_RECORDED_BODY + 10),
  });
  const [long] = (await sendJson(fresh, "/sandbox/requests")).body.requests;
  assert.equal(long.body.length, MAX_RECORDED_BODY);
});
