import assert from "node:assert/strict";
import { createSandbox } from "../../src/sandbox/mod.ts";
import { assertError, send, sendJson } from "./helpers.ts";

const IP = { "PSU-IP-Address": "192.0.2.1" };

Deno.test("mountControls() reset forgets payments, consents and the request log and sets the clock back", async () => {
  const app = createSandbox({ now: () => new Date("2025-07-01T10:00:00Z") });
  const created = await sendJson(app, "/psd2/v1/payments/domestic", {
    method: "POST",
    headers: IP,
    body: { instructedAmount: { currency: "GEL", amount: "1.00" } },
  });
  await send(app, "/sandbox/clock", { method: "PUT", body: { advanceSeconds: 60 } });
  assert.equal((await sendJson(app, "/sandbox/requests")).body.requests.length, 1);
  const reset = await send(app, "/sandbox/reset", { method: "POST" });
  assert.equal(reset.status, 204);
  await assertError(send(app, created.body._links.self.href), {
    status: 404,
    code: "RESOURCE_UNKNOWN",
  });
  const clock = await sendJson(app, "/sandbox/clock");
  assert.deepEqual(clock.body, { now: "2025-07-01T10:00:00.000Z", offsetSeconds: 0 });
  const log = await sendJson(app, "/sandbox/requests");
  assert.deepEqual(log.body.requests.map((r: { target: string }) => r.target), [
    created.body._links.self.href,
  ]);
});

Deno.test("mountControls() the clock is set, advanced and sent back to the base clock", async () => {
  const app = createSandbox({ now: () => new Date("2025-07-01T10:00:00Z") });
  const set = await sendJson(app, "/sandbox/clock", {
    method: "PUT",
    body: { now: "2026-01-01T00:00:00Z" },
  });
  assert.equal(set.body.now, "2026-01-01T00:00:00.000Z");
  const advanced = await sendJson(app, "/sandbox/clock", {
    method: "PUT",
    body: { advanceSeconds: 3600 },
  });
  assert.equal(advanced.body.now, "2026-01-01T01:00:00.000Z");
  const back = await sendJson(app, "/sandbox/clock", { method: "PUT", body: { now: null } });
  assert.deepEqual(back.body, { now: "2025-07-01T10:00:00.000Z", offsetSeconds: 0 });
});

Deno.test("mountControls() refuses malformed control bodies and queries with 400 FORMAT_ERROR", async () => {
  const app = createSandbox();
  const bad: [string, string, unknown][] = [
    ["PUT", "/sandbox/clock", { now: "tomorrow" }],
    ["PUT", "/sandbox/clock", { now: 5 }],
    ["PUT", "/sandbox/clock", { advanceSeconds: "60" }],
    ["PUT", "/sandbox/clock", { advanceSeconds: 1e300 }],
    ["PUT", "/sandbox/clock", {}],
    ["PUT", "/sandbox/settings", { decoupledDelayMs: -1 }],
    ["PUT", "/sandbox/settings", { decoupledDelayMs: 1.5 }],
    ["PUT", "/sandbox/settings", {}],
    ["PUT", "/sandbox/settings", { redirectConfirmation: "yes" }],
    ["GET", "/sandbox/requests?limit=0", undefined],
    ["GET", "/sandbox/requests?limit=abc", undefined],
  ];
  for (const [method, path, body] of bad) {
    await assertError(send(app, path, { method, body }), { status: 400, code: "FORMAT_ERROR" });
  }
});

Deno.test("mountControls() settings change the decoupled delay of new authorisations", async () => {
  let now = new Date("2025-07-01T10:00:00Z");
  const app = createSandbox({ now: () => now, decoupledDelayMs: 60_000 });
  const changed = await sendJson(app, "/sandbox/settings", {
    method: "PUT",
    body: { decoupledDelayMs: 10 },
  });
  assert.equal(changed.body.decoupledDelayMs, 10);
  assert.equal(changed.body.scaOrigin, "https://sandbox-bank.example");
  const created = await sendJson(app, "/psd2/v1/payments/domestic", {
    method: "POST",
    headers: { ...IP, "TPP-Decoupled-Preferred": "true", "PSU-ID": "PSU-OK" },
    body: { instructedAmount: { currency: "GEL", amount: "1.00" } },
  });
  now = new Date(now.getTime() + 10);
  const sca = await sendJson(app, created.body._links.scaStatus.href);
  assert.equal(sca.body.scaStatus, "finalised");
});

Deno.test("mountControls() approve and deny decide an open authorisation; unknown ones are 404", async () => {
  const app = createSandbox();
  const created = await sendJson(app, "/psd2/v1/consents", {
    method: "POST",
    headers: IP,
    body: {
      access: { accounts: [{ iban: "GE42SB0000000101904917" }] },
      recurringIndicator: false,
      validUntil: "2030-01-01",
      frequencyPerDay: 1,
      combinedServiceIndicator: false,
    },
  });
  const id = created.body._links.scaStatus.href.split("/").at(-1);
  const denied = await sendJson(app, `/sandbox/authorisations/${id}/deny`, { method: "POST" });
  assert.deepEqual(denied.body, { authorisationId: id, scaStatus: "failed" });
  const status = await sendJson(app, `/psd2/v1/consents/${created.body.consentId}/status`);
  assert.equal(status.body.consentStatus, "rejected");
  await assertError(send(app, `/sandbox/authorisations/${id}/approve`, { method: "POST" }), {
    status: 409,
    code: "STATUS_INVALID",
  });
  await assertError(send(app, "/sandbox/authorisations/nope/approve", { method: "POST" }), {
    status: 404,
    code: "RESOURCE_UNKNOWN",
  });
});
