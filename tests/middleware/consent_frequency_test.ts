import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway, type TestGateway } from "../support/gateway.ts";
import { closedPort, startUpstream } from "../support/upstream.ts";
import { storeSetup, WITHOUT_REDIS } from "../support/redis.ts";
import { MemoryStore } from "../../src/store/memory.ts";
import type { Services } from "../../src/core/services.ts";
import { buildPolicy, type PolicyInput } from "../support/policies.ts";
import { consentTerms } from "../../middleware/consent_frequency.ts";

function policy(...parts: PolicyInput[]) {
  return buildPolicy({ defaults: { consent_frequency: { time_zone: "Asia/Tbilisi" } } }, ...parts);
}

/** A core that creates consents (c-1, c-2, ...) and answers their reads from what it was sent. */
function consentCore(adjust: Record<string, unknown> = {}) {
  const consents = new Map<string, Record<string, unknown>>();
  return startUpstream((request, recorded) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path === "/psd2/v1/consents") {
      const id = `c-${consents.size + 1}`;
      consents.set(id, JSON.parse(recorded.body));
      return Response.json({ consentStatus: "received", consentId: id }, { status: 201 });
    }
    const read = /^\/psd2\/v1\/consents\/([^/]+)$/.exec(path);
    if (read && request.method === "GET") {
      return Response.json({ ...consents.get(read[1]), ...adjust, consentStatus: "valid" });
    }
    if (read && request.method === "DELETE") return new Response(null, { status: 204 });
    return Response.json({ balances: [] });
  });
}

const NEXT_YEAR = `${new Date().getUTCFullYear() + 1}-12-31`;

async function createConsent(
  gateway: TestGateway,
  terms: { recurringIndicator: boolean; frequencyPerDay: number; validUntil?: string },
): Promise<string> {
  const response = await gateway.fetch("/v1/consents", {
    method: "POST",
    headers: {
      "x-request-id": crypto.randomUUID(),
      "content-type": "application/json",
      "psu-ip-address": "10.1.1.1",
    },
    body: JSON.stringify({
      access: { balances: [{ iban: "GE29NB0000000101904917" }] },
      validUntil: NEXT_YEAR,
      combinedServiceIndicator: false,
      ...terms,
    }),
  });
  assert.equal(response.status, 201);
  return (await response.json()).consentId;
}

function read(
  gateway: TestGateway,
  consent: string,
  options: { psu?: boolean; path?: string } = {},
) {
  const headers: Record<string, string> = {
    "x-request-id": crypto.randomUUID(),
    "consent-id": consent,
  };
  if (options.psu) headers["psu-ip-address"] = "10.1.1.1";
  return gateway.fetch(options.path ?? "/v1/accounts/a1/balances", { headers });
}

/** Sends requests one after the other; the statuses in order. */
async function statuses(calls: (() => Promise<Response>)[]): Promise<number[]> {
  const responses = [];
  for (const call of calls) responses.push(await call());
  return await settle(responses);
}

async function settle(responses: Response[]): Promise<number[]> {
  const out = [];
  for (const response of responses) {
    await response.body?.cancel();
    out.push(response.status);
  }
  return out;
}

async function times(n: number, fn: () => Promise<Response>): Promise<number[]> {
  const out = [];
  for (let i = 0; i < n; i++) out.push(...await statuses([() => fn()]));
  return out;
}

Deno.test("consentFrequency() counts TPP-initiated reads per consent and resource, up to frequencyPerDay", async () => {
  await using core = consentCore();
  await using gateway = await startGateway({ policy: policy(), upstream: core.url });
  const consent = await createConsent(gateway, { recurringIndicator: true, frequencyPerDay: 2 });
  assert.deepEqual(await times(2, () => read(gateway, consent)), [200, 200]);
  const over = await read(gateway, consent);
  assert.equal(over.status, 429);
  const body = await over.json();
  assert.deepEqual(body.tppMessages[0], {
    category: "ERROR",
    code: "ACCESS_EXCEEDED",
    path: "Consent-ID",
    text:
      `Consent "${consent}" allows 2 reads of this resource a day; the count starts again at midnight Asia/Tbilisi`,
  });
  const retry = Number(over.headers.get("retry-after"));
  assert.ok(retry > 0 && retry <= 86_400);
  assert.deepEqual(
    await times(2, () => read(gateway, consent, { path: "/v1/accounts/a1" })),
    [200, 200],
    "per resource",
  );
  assert.deepEqual(
    await times(3, () => read(gateway, consent, { psu: true })),
    [200, 200, 200],
    "PSU-initiated reads are not counted",
  );
  assert.equal(core.received.filter((r) => r.path === "/psd2/v1/accounts/a1/balances").length, 5);
});

Deno.test("consentFrequency() caps frequencyPerDay at the TPP's maximum, bilateral agreements aside", async () => {
  await using core = consentCore();
  // The body rules refuse frequencyPerDay above 4; the bank may still grant more (read back).
  const noBodyRules: PolicyInput = { defaults: { body_schema: { mode: "off" } } };
  {
    await using gateway = await startGateway({ policy: policy(noBodyRules), upstream: core.url });
    const consent = await createConsent(gateway, { recurringIndicator: true, frequencyPerDay: 10 });
    assert.deepEqual(await times(5, () => read(gateway, consent)), [200, 200, 200, 200, 429]);
  }
  await using gateway = await startGateway({
    policy: policy(noBodyRules, {
      defaults: { consent_frequency: { bilateral: { "ip:127.0.0.1": 6 } } },
    }),
    upstream: core.url,
  });
  const consent = await createConsent(gateway, { recurringIndicator: true, frequencyPerDay: 10 });
  assert.deepEqual(await times(7, () => read(gateway, consent)), [
    200,
    200,
    200,
    200,
    200,
    200,
    429,
  ]);
});

Deno.test("consentFrequency() allows one read of each resource on a one-off consent, PSU-initiated or not", async () => {
  await using core = consentCore();
  await using gateway = await startGateway({ policy: policy(), upstream: core.url });
  const consent = await createConsent(gateway, { recurringIndicator: false, frequencyPerDay: 1 });
  assert.deepEqual(
    await statuses([
      () => read(gateway, consent, { psu: true }),
      () => read(gateway, consent, { psu: true }),
    ]),
    [200, 429],
  );
  assert.deepEqual(
    await statuses([
      () => read(gateway, consent, { path: "/v1/accounts" }),
      () => read(gateway, consent, { path: "/v1/accounts" }),
    ]),
    [200, 429],
  );
});

Deno.test("consentFrequency() forwards reads on consents it never saw, unless a default cap is set", async () => {
  await using core = consentCore();
  {
    await using gateway = await startGateway({ policy: policy(), upstream: core.url });
    assert.deepEqual(await times(6, () => read(gateway, "never-seen")), [
      200,
      200,
      200,
      200,
      200,
      200,
    ]);
  }
  await using gateway = await startGateway({
    policy: policy({ defaults: { consent_frequency: { unknown_consent_limit: 2 } } }),
    upstream: core.url,
  });
  const statusList = await times(3, () => read(gateway, "never-seen"));
  assert.deepEqual(statusList, [200, 200, 429]);
});

Deno.test("consentFrequency() refreshes a consent from its read and forgets a deleted one", async () => {
  await using core = consentCore({ frequencyPerDay: 1 });
  await using gateway = await startGateway({ policy: policy(), upstream: core.url });
  const consent = await createConsent(gateway, { recurringIndicator: true, frequencyPerDay: 4 });
  const info = await gateway.fetch(`/v1/consents/${consent}`, {
    headers: { "x-request-id": crypto.randomUUID() },
  });
  assert.equal((await info.json()).frequencyPerDay, 1, "the bank adjusted it");
  assert.deepEqual(await times(2, () => read(gateway, consent)), [200, 429]);
  const deleted = await gateway.fetch(`/v1/consents/${consent}`, {
    method: "DELETE",
    headers: { "x-request-id": crypto.randomUUID() },
  });
  assert.equal(deleted.status, 204);
  assert.deepEqual(
    await times(2, () => read(gateway, consent)),
    [200, 200],
    "unknown again: the core decides",
  );
});

Deno.test("consentFrequency() does not learn a consent whose validUntil has passed", async () => {
  await using core = consentCore();
  // The body rules refuse a past validUntil; the core might not.
  await using gateway = await startGateway({
    policy: policy({ defaults: { body_schema: { mode: "off" } } }),
    upstream: core.url,
  });
  const consent = await createConsent(gateway, {
    recurringIndicator: false,
    frequencyPerDay: 1,
    validUntil: "2020-01-01",
  });
  assert.deepEqual(await times(2, () => read(gateway, consent)), [200, 200]);
});

Deno.test("consentFrequency() starts counting again at midnight in the bank's time zone", async () => {
  let now = Date.parse("2026-03-10T19:30:00Z"); // 23:30 in Tbilisi
  const clock = { now: () => now };
  const services: Partial<Services> = { ...clock, store: new MemoryStore(clock) };
  await using core = consentCore();
  await using gateway = await startGateway({ policy: policy(), upstream: core.url, services });
  const consent = await createConsent(gateway, { recurringIndicator: true, frequencyPerDay: 1 });
  const first = await read(gateway, consent);
  assert.equal(first.status, 200);
  await first.body?.cancel();
  const over = await read(gateway, consent);
  assert.equal(over.status, 429);
  assert.equal(over.headers.get("retry-after"), String(30 * 60));
  await over.body?.cancel();
  now = Date.parse("2026-03-10T20:00:00Z"); // midnight in Tbilisi
  assert.deepEqual(await statuses([() => read(gateway, consent)]), [200]);
});

Deno.test({
  name: "consentFrequency() counts across two gateway instances on Redis",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using store = await storeSetup("redis");
    await using core = consentCore();
    const options = { policy: policy(store.policy), upstream: core.url, env: store.env };
    await using one = await startGateway(options);
    await using two = await startGateway(options);
    const consent = await createConsent(one, { recurringIndicator: true, frequencyPerDay: 3 });
    assert.deepEqual(
      await statuses([
        () => read(two, consent),
        () => read(one, consent),
        () => read(two, consent),
        () => read(one, consent),
      ]),
      [200, 200, 200, 429],
    );
  },
});

Deno.test("consentFrequency() refuses an unknown time zone at start-up", async () => {
  await using core = consentCore();
  await assert.rejects(
    startGateway({
      policy: policy({ defaults: { consent_frequency: { time_zone: "Asia/Atlantis" } } }),
      upstream: core.url,
    }),
    /time_zone "Asia\/Atlantis" is not a known IANA time zone/,
  );
});

Deno.test("consentTerms() takes complete terms only", () => {
  const good = { recurringIndicator: true, frequencyPerDay: 4, validUntil: "2030-12-31" };
  assert.deepEqual(consentTerms(good), {
    recurring: true,
    frequencyPerDay: 4,
    validUntil: "2030-12-31",
  });
  assert.deepEqual(consentTerms({ ...good, recurringIndicator: false, frequencyPerDay: 1 }), {
    recurring: false,
    frequencyPerDay: 1,
    validUntil: "2030-12-31",
  });
  for (
    const bad of [
      null,
      "terms",
      { ...good, recurringIndicator: "true" },
      { ...good, frequencyPerDay: 0 },
      { ...good, frequencyPerDay: 1.5 },
      { ...good, frequencyPerDay: "4" },
      { ...good, validUntil: 20301231 },
      { ...good, validUntil: "2030-12-31T00:00:00Z" },
      { ...good, validUntil: "x2030-12-31" },
      // JSON can carry an array whose string form is a date.
      { ...good, validUntil: ["2030-12-31"] },
    ]
  ) {
    assert.equal(consentTerms(bad), undefined, JSON.stringify(bad));
  }
});

Deno.test("consentFrequency() says one read, and says when the consent is not known to the gateway", async () => {
  await using core = consentCore();
  await using gateway = await startGateway({
    policy: policy({ defaults: { consent_frequency: { unknown_consent_limit: 1 } } }),
    upstream: core.url,
  });
  const consent = await createConsent(gateway, { recurringIndicator: false, frequencyPerDay: 1 });
  await (await read(gateway, consent)).body?.cancel();
  const over = await read(gateway, consent);
  assert.equal(
    (await over.json()).tppMessages[0].text,
    `Consent "${consent}" allows 1 read of this resource a day; the count starts again at midnight Asia/Tbilisi`,
  );
  await (await read(gateway, "never-seen")).body?.cancel();
  const unknown = await read(gateway, "never-seen");
  assert.equal(unknown.status, 429);
  assert.equal(
    (await unknown.json()).tppMessages[0].text,
    'Consent "never-seen" allows 1 read of this resource a day (consent not known to the gateway); the count starts again at midnight Asia/Tbilisi',
  );
});

Deno.test("consentFrequency() counts only reads the core answers with 2xx", async () => {
  let status = 500;
  await using core = startUpstream((request) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path === "/psd2/v1/consents") {
      return Response.json({ consentStatus: "received", consentId: "c-9" }, { status: 201 });
    }
    return Response.json({ balances: [] }, { status });
  });
  await using gateway = await startGateway({ policy: policy(), upstream: core.url });
  const consent = await createConsent(gateway, { recurringIndicator: true, frequencyPerDay: 1 });
  for (const failing of [500, 404, 300]) {
    status = failing;
    const answer = await read(gateway, consent);
    await answer.body?.cancel();
    assert.equal(answer.status, failing, "taken back: the next read is allowed");
  }
  status = 200;
  assert.deepEqual(await times(2, () => read(gateway, consent)), [200, 429]);
});

Deno.test("consentFrequency() learns a consent valid until today, and counts a 299 answer", async () => {
  let status = 299;
  await using core = startUpstream((request) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path === "/psd2/v1/consents") {
      return Response.json({ consentStatus: "received", consentId: "c-today" }, { status: 201 });
    }
    return Response.json({ balances: [] }, { status });
  });
  await using gateway = await startGateway({
    policy: policy({ defaults: { body_schema: { mode: "off" } } }),
    upstream: core.url,
  });
  const today = new Intl.DateTimeFormat("en-CA", { timeZone: "Asia/Tbilisi" }).format(new Date());
  const consent = await createConsent(gateway, {
    recurringIndicator: true,
    frequencyPerDay: 1,
    validUntil: today,
  });
  assert.deepEqual(await times(1, () => read(gateway, consent)), [299]);
  status = 200;
  assert.deepEqual(await times(1, () => read(gateway, consent)), [429], "the 299 read counted");
});

Deno.test("consentFrequency() in report mode forwards a read over the count and records the finding", async () => {
  await using core = consentCore();
  await using gateway = await startGateway({
    policy: policy({ defaults: { consent_frequency: { mode: "report" } } }),
    upstream: core.url,
  });
  const consent = await createConsent(gateway, { recurringIndicator: true, frequencyPerDay: 1 });
  assert.deepEqual(await times(2, () => read(gateway, consent)), [200, 200]);
  const line = gateway.log.lines.filter((l) => l.findings).at(-1) as {
    findings: { check: string; mode: string; code: string }[];
  };
  assert.deepEqual(
    line.findings.map((f) => [f.check, f.mode, f.code]),
    [["consent_frequency", "report", "ACCESS_EXCEEDED"]],
  );
});

Deno.test("consentFrequency() learns a consent only from a 201 JSON answer with a consentId", async () => {
  for (
    const answer of [
      () => Response.json({ consentStatus: "received", consentId: "c-x" }, { status: 200 }),
      () => Response.json({ consentStatus: "received", consentId: "" }, { status: 201 }),
      () =>
        new Response(JSON.stringify({ consentId: "c-x" }), {
          status: 201,
          headers: { "content-type": "text/plain" },
        }),
    ]
  ) {
    await using core = startUpstream((request) => {
      const path = new URL(request.url).pathname;
      if (request.method === "POST" && path === "/psd2/v1/consents") return answer();
      return Response.json({ balances: [] });
    });
    await using gateway = await startGateway({ policy: policy(), upstream: core.url });
    const created = await gateway.fetch("/v1/consents", {
      method: "POST",
      headers: {
        "x-request-id": crypto.randomUUID(),
        "content-type": "application/json",
        "psu-ip-address": "10.1.1.1",
      },
      body: JSON.stringify({
        access: { balances: [{ iban: "GE29NB0000000101904917" }] },
        validUntil: NEXT_YEAR,
        combinedServiceIndicator: false,
        recurringIndicator: true,
        frequencyPerDay: 1,
      }),
    });
    await created.body?.cancel();
    assert.equal(created.status, answer().status, "the core's answer, passed on");
    assert.deepEqual(await times(2, () => read(gateway, "c-x")), [200, 200], "not learnt");
  }
});

/** A memory store whose `put`, `delete` or `refund` fails, as a store that went away would. */
class FailingStore extends MemoryStore {
  constructor(readonly failing: ReadonlySet<"put" | "delete" | "refund">) {
    super();
  }
  override put(key: string, value: string, ttlMs: number): Promise<void> {
    if (this.failing.has("put")) return Promise.reject(new Error("store gone (put)"));
    return super.put(key, value, ttlMs);
  }
  override delete(key: string): Promise<void> {
    if (this.failing.has("delete")) return Promise.reject(new Error("store gone (delete)"));
    return super.delete(key);
  }
  override refund(counter: string): Promise<void> {
    if (this.failing.has("refund")) return Promise.reject(new Error("store gone (refund)"));
    return super.refund(counter);
  }
}

function errorLines(gateway: TestGateway, msg: string) {
  return gateway.log.lines.filter((line) => line.msg === msg);
}

Deno.test("consentFrequency() learns nothing from a 201 without JSON, a non-string consentId or incomplete terms, and passes the answer on", async () => {
  const cases: { answer: () => Response; terms: Record<string, unknown>; read: string }[] = [
    // No content-type at all (a byte body gets none).
    {
      answer: () => new Response(new Uint8Array([123, 125]), { status: 201 }),
      terms: {},
      read: "c-x",
    },
    {
      answer: () => Response.json({ consentStatus: "received", consentId: 42 }, { status: 201 }),
      terms: {},
      read: "42",
    },
    {
      answer: () => Response.json({ consentStatus: "received", consentId: "c-x" }, { status: 201 }),
      terms: { frequencyPerDay: undefined },
      read: "c-x",
    },
  ];
  for (const { answer, terms, read: consent } of cases) {
    await using core = startUpstream((request) => {
      const path = new URL(request.url).pathname;
      if (request.method === "POST" && path === "/psd2/v1/consents") return answer();
      return Response.json({ balances: [] });
    });
    await using gateway = await startGateway({
      policy: policy({ defaults: { body_schema: { mode: "off" } } }),
      upstream: core.url,
    });
    const created = await gateway.fetch("/v1/consents", {
      method: "POST",
      headers: {
        "x-request-id": crypto.randomUUID(),
        "content-type": "application/json",
        "psu-ip-address": "10.1.1.1",
      },
      body: JSON.stringify({
        access: { balances: [{ iban: "GE29NB0000000101904917" }] },
        validUntil: NEXT_YEAR,
        combinedServiceIndicator: false,
        recurringIndicator: false,
        frequencyPerDay: 1,
        ...terms,
      }),
    });
    await created.body?.cancel();
    assert.equal(created.status, 201, "the core's answer, passed on");
    assert.deepEqual(await times(2, () => read(gateway, consent)), [200, 200], "not learnt");
  }
});

Deno.test("consentFrequency() refreshes a consent only from a 200 JSON answer with complete terms", async () => {
  let answer = () =>
    Response.json({ recurringIndicator: true, frequencyPerDay: 1, validUntil: NEXT_YEAR }, {
      status: 404,
    });
  await using core = startUpstream((request) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path === "/psd2/v1/consents") {
      return Response.json({ consentStatus: "received", consentId: "c-r" }, { status: 201 });
    }
    if (path === "/psd2/v1/consents/c-r") return answer();
    return Response.json({ balances: [] });
  });
  await using gateway = await startGateway({ policy: policy(), upstream: core.url });
  const consent = await createConsent(gateway, { recurringIndicator: true, frequencyPerDay: 3 });
  const refreshes = [
    () =>
      Response.json({ recurringIndicator: true, frequencyPerDay: 1, validUntil: NEXT_YEAR }, {
        status: 404,
      }),
    () =>
      Response.json({ recurringIndicator: true, validUntil: NEXT_YEAR, consentStatus: "valid" }),
    () => new Response(new Uint8Array([123, 125])),
  ];
  for (const refresh of refreshes) {
    answer = refresh;
    const info = await gateway.fetch(`/v1/consents/${consent}`, {
      headers: { "x-request-id": crypto.randomUUID() },
    });
    await info.body?.cancel();
    assert.equal(info.status, refresh().status, "the core's answer, passed on");
  }
  assert.deepEqual(
    await times(4, () => read(gateway, consent)),
    [200, 200, 200, 429],
    "still 3 a day",
  );
});

Deno.test("consentFrequency() forgets a consent only when the core deleted it (2xx)", async () => {
  let status = 404;
  await using core = startUpstream((request) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path === "/psd2/v1/consents") {
      return Response.json({ consentStatus: "received", consentId: "c-d" }, { status: 201 });
    }
    if (request.method === "DELETE") return new Response(null, { status });
    return Response.json({ balances: [] });
  });
  await using gateway = await startGateway({ policy: policy(), upstream: core.url });
  const consent = await createConsent(gateway, { recurringIndicator: false, frequencyPerDay: 1 });
  for (const refused of [404, 300]) {
    status = refused;
    const deleted = await gateway.fetch(`/v1/consents/${consent}`, {
      method: "DELETE",
      headers: { "x-request-id": crypto.randomUUID() },
    });
    await deleted.body?.cancel();
    assert.equal(deleted.status, refused);
  }
  assert.deepEqual(await times(2, () => read(gateway, consent)), [200, 429], "still known");
});

Deno.test("consentFrequency() logs a consent it could not learn or forget, and still passes the answer on", async () => {
  await using core = consentCore();
  {
    await using gateway = await startGateway({
      policy: policy(),
      upstream: core.url,
      services: { store: new FailingStore(new Set(["put"])) },
    });
    const consent = await createConsent(gateway, { recurringIndicator: false, frequencyPerDay: 1 });
    assert.deepEqual(
      errorLines(gateway, "consent not learnt").map(({ level, op, error }) => ({
        level,
        op,
        error,
      })),
      [{ level: "error", op: "createConsent", error: "Error: store gone (put)" }],
    );
    assert.deepEqual(await times(2, () => read(gateway, consent)), [200, 200], "not learnt");
  }
  const store = new FailingStore(new Set(["delete"]));
  await using gateway = await startGateway({
    policy: policy(),
    upstream: core.url,
    services: { store },
  });
  const consent = await createConsent(gateway, { recurringIndicator: false, frequencyPerDay: 1 });
  const deleted = await gateway.fetch(`/v1/consents/${consent}`, {
    method: "DELETE",
    headers: { "x-request-id": crypto.randomUUID() },
  });
  assert.equal(deleted.status, 204);
  assert.deepEqual(
    errorLines(gateway, "consent not forgotten").map(({ level, error }) => ({ level, error })),
    [{ level: "error", error: "Error: store gone (delete)" }],
  );
});

Deno.test("consentFrequency() logs a read it could not take back, and takes back only counted reads", async () => {
  let status = 500;
  await using core = startUpstream((request) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path === "/psd2/v1/consents") {
      return Response.json({ consentStatus: "received", consentId: "c-f" }, { status: 201 });
    }
    return Response.json({ balances: [] }, { status });
  });
  await using gateway = await startGateway({
    policy: policy(),
    upstream: core.url,
    services: { store: new FailingStore(new Set(["refund"])) },
  });
  const consent = await createConsent(gateway, { recurringIndicator: true, frequencyPerDay: 1 });
  await (await read(gateway, consent, { psu: true })).body?.cancel();
  await (await read(gateway, "never-seen")).body?.cancel();
  assert.deepEqual(errorLines(gateway, "consent read not refunded"), [], "nothing was counted");
  const requestId = crypto.randomUUID();
  const failed = await gateway.fetch("/v1/accounts/a1/balances", {
    headers: { "x-request-id": requestId, "consent-id": consent },
  });
  await failed.body?.cancel();
  assert.equal(failed.status, 500);
  assert.deepEqual(
    errorLines(gateway, "consent read not refunded").map(({ level, op, request_id, error }) => ({
      level,
      op,
      request_id,
      error,
    })),
    [{
      level: "error",
      op: "getBalances",
      request_id: requestId,
      error: "Error: store gone (refund)",
    }],
  );
  status = 200;
  assert.deepEqual(
    await times(1, () => read(gateway, consent)),
    [429],
    "the failed read stayed counted",
  );
});

Deno.test("consentFrequency() takes back a read the core never answered", async () => {
  const store = new MemoryStore();
  await using core = consentCore();
  await using gateway = await startGateway({
    policy: policy(),
    upstream: core.url,
    services: { store },
  });
  await using cut = await startGateway({
    policy: policy(),
    upstream: `http://127.0.0.1:${closedPort()}`,
    services: { store },
  });
  const consent = await createConsent(gateway, { recurringIndicator: true, frequencyPerDay: 1 });
  const failed = await read(cut, consent);
  await failed.body?.cancel();
  assert.ok([502, 503, 504].includes(failed.status), `status ${failed.status}`);
  assert.deepEqual(await times(2, () => read(gateway, consent)), [200, 429], "taken back");
});

Deno.test("consentFrequency() counts nothing without a Consent-ID, or on a payment", async () => {
  await using core = consentCore();
  await using gateway = await startGateway({
    policy: policy({
      defaults: { consent_id: { mode: "off" }, consent_frequency: { unknown_consent_limit: 1 } },
    }),
    upstream: core.url,
  });
  const withoutConsent = () =>
    gateway.fetch("/v1/accounts/a1/balances", { headers: { "x-request-id": crypto.randomUUID() } });
  assert.deepEqual(await times(2, withoutConsent), [200, 200]);
  const consent = await createConsent(gateway, { recurringIndicator: false, frequencyPerDay: 1 });
  const path = "/v1/payments/domestic/p-1/status";
  assert.deepEqual(
    await times(2, () => read(gateway, consent, { path })),
    [200, 200],
    "not an account read",
  );
  assert.deepEqual(await times(2, () => read(gateway, consent)), [200, 429]);
});

Deno.test("consentFrequency() in report mode lets the other limits count a read over the consent's count", async () => {
  await using core = consentCore();
  await using gateway = await startGateway({
    policy: policy({
      defaults: {
        consent_frequency: { mode: "report" },
        rate_limit: { limits: { per_tpp: { key: ["tpp"], limit: 4, window: "1h" } } },
      },
    }),
    upstream: core.url,
  });
  const consent = await createConsent(gateway, { recurringIndicator: true, frequencyPerDay: 1 });
  assert.deepEqual(await times(4, () => read(gateway, consent)), [200, 200, 200, 429]);
});
