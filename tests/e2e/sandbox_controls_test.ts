/**
 * The sandbox controls next to the gateway: the request log shows what the gateway forwarded,
 * reset forgets everything, the clock moves consents into the past; the controls are on the
 * sandbox's port only, never routed by the gateway.
 */
import assert from "node:assert/strict";
import { createConsent, initiatePayment, PAYMENT, startBank } from "./bank.ts";
import { call, PSU_IP } from "./flow.ts";

Deno.test("e2e sandbox controls: the request log shows what the gateway forwarded, newest first", async () => {
  await using bank = await startBank();
  const requestId = crypto.randomUUID();
  const created = await call(bank.gateway, "POST", "/v1/payments/domestic", {
    body: PAYMENT,
    headers: { "x-request-id": requestId, "psu-ip-address": PSU_IP, "psu-id": "PSU-OK" },
  });
  assert.equal(created.status, 201);
  await call(bank.gateway, "GET", created.body._links.status.href);
  const log = await bank.control("GET", "/sandbox/requests?limit=2");
  assert.equal(log.status, 200);
  const [status, post] = log.body.requests;
  assert.equal(status.method, "GET");
  assert.equal(status.target, `/psd2/v1/payments/domestic/${created.body.paymentId}/status`);
  assert.equal(post.method, "POST");
  assert.equal(post.target, "/psd2/v1/payments/domestic");
  assert.equal(post.status, 201);
  assert.equal(post.headers["x-request-id"], requestId);
  assert.equal(post.headers["psu-id"], "PSU-OK");
  assert.ok(post.headers["x-forwarded-for"], "the gateway adds X-Forwarded-For");
  assert.deepEqual(JSON.parse(post.body), PAYMENT);
  assert.match(post.at, /^\d{4}-\d{2}-\d{2}T/);
});

Deno.test("e2e sandbox controls: reset forgets payments and the request log", async () => {
  await using bank = await startBank();
  const created = await initiatePayment(bank);
  assert.equal((await bank.control("POST", "/sandbox/reset")).status, 204);
  assert.deepEqual((await bank.control("GET", "/sandbox/requests")).body, { requests: [] });
  const read = await call(bank.gateway, "GET", created.body._links.status.href);
  assert.equal(read.status, 404);
  assert.equal(read.body.tppMessages[0].code, "RESOURCE_UNKNOWN");
});

Deno.test("e2e sandbox controls: moving the clock past validUntil expires a valid consent", async () => {
  await using bank = await startBank();
  const created = await createConsent(bank, { "psu-id": "PSU-OK" });
  const done = await call(bank.gateway, "PUT", created.body._links.scaStatus.href, {
    body: { scaAuthenticationData: "123456" },
  });
  assert.equal(done.body.scaStatus, "finalised");
  const statusHref = `/v1/consents/${created.body.consentId}/status`;
  assert.equal((await call(bank.gateway, "GET", statusHref)).body.consentStatus, "valid");
  const moved = await bank.control("PUT", "/sandbox/clock", { advanceSeconds: 200 * 86_400 });
  assert.equal(moved.status, 200);
  assert.equal(moved.body.offsetSeconds, 200 * 86_400);
  assert.equal((await call(bank.gateway, "GET", statusHref)).body.consentStatus, "expired");
  const back = await bank.control("PUT", "/sandbox/clock", { now: null });
  assert.equal(back.body.offsetSeconds, 0);
  assert.equal((await call(bank.gateway, "GET", statusHref)).body.consentStatus, "valid");
});

Deno.test("e2e sandbox controls: the gateway does not route to them", async () => {
  await using bank = await startBank();
  const attempts = [["GET", "/sandbox/users"], ["POST", "/sandbox/reset"], [
    "POST",
    "/v1/sandbox/users",
  ], ["GET", "/v1/sandbox/requests"]];
  for (const [method, path] of attempts) {
    const response = await bank.gateway.fetch(path, {
      method,
      headers: {
        "x-request-id": crypto.randomUUID(),
        "content-type": "application/json",
        "psu-ip-address": PSU_IP,
      },
      body: method === "POST" ? "{}" : undefined,
    });
    await response.body?.cancel();
    assert.ok(response.status >= 400 && response.status < 500, `${method} ${path}`);
  }
  const log = await bank.control("GET", "/sandbox/requests");
  assert.deepEqual(log.body.requests, [], "nothing reached the sandbox");
  const users = await bank.control("GET", "/sandbox/users");
  assert.equal(users.status, 200);
  assert.equal(users.body.otp, "123456");
  assert.ok(users.body.users.some((u: { psuId: string }) => u.psuId === "PSU-NO-FUNDS"));
});
