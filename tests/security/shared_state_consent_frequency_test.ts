/**
 * Attacks on the consent's frequencyPerDay count: another TPP draining a consent it does not own,
 * reads the core refused still counting, case variants of a consent id counted apart, and a
 * made-up PSU-IP-Address making TPP-initiated reads look PSU-initiated (never counted).
 */
import assert from "node:assert/strict";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { type LevelInput, passthroughPolicy, type PolicyInput } from "../support/policies.ts";
import { startUpstream, type TestUpstream } from "../support/upstream.ts";
import { consentBody } from "../support/requests.ts";
import { createConsentWith } from "../support/consents.ts";
import { gatewayOn, onEachStore as onEachStoreShared } from "../support/each_store.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";

const issuer = await tokenIssuer();
const OWNER = "PSDGE-NBG-000001";
const OTHER = "PSDGE-NBG-666666";
const BALANCES = "/v1/accounts/a1/balances";

/**
 * A core that creates consents with UUID ids and answers account reads with `readStatus()`
 * (200 unless the test says otherwise).
 */
function consentCore(readStatus: () => number = () => 200): TestUpstream {
  return startUpstream((request) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path === "/psd2/v1/consents") {
      return Response.json(
        { consentStatus: "received", consentId: crypto.randomUUID() },
        { status: 201 },
      );
    }
    const status = readStatus();
    return status === 200 ? Response.json({ balances: [] }) : Response.json({
      tppMessages: [{ category: "ERROR", code: "CONSENT_INVALID", text: "not yours" }],
    }, { status });
  });
}

function policy(sections: PolicyInput = {}, defaults: LevelInput = {}) {
  return passthroughPolicy(sections, {
    defaults: {
      bearer_token: issuer.options,
      consent_frequency: { mode: "enforce", time_zone: "Asia/Tbilisi", max_per_day: 4 },
      ...defaults,
    },
  });
}

async function createConsent(gateway: TestGateway, tpp: string, frequencyPerDay = 4) {
  return createConsentWith(gateway, {
    "content-type": "application/json",
    "psu-ip-address": "81.95.1.1",
    ...await issuer.headers(tpp),
  }, { ...consentBody(), recurringIndicator: true, frequencyPerDay });
}

async function read(
  gateway: TestGateway,
  tpp: string,
  consent: string,
  headers: Record<string, string> = {},
) {
  const response = await gateway.fetch(BALANCES, {
    headers: {
      "x-request-id": crypto.randomUUID(),
      "consent-id": consent,
      ...await issuer.headers(tpp),
      ...headers,
    },
  });
  const body = await response.json();
  return {
    status: response.status,
    code: body.tppMessages?.[0]?.code,
    path: body.tppMessages?.[0]?.path,
  };
}

async function statuses(n: number, send: () => ReturnType<typeof read>): Promise<number[]> {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await send()).status);
  return out;
}

function reads(core: TestUpstream): number {
  return core.received.filter((r) => r.path === "/psd2/v1" + BALANCES.slice(3)).length;
}

/** Registers a test on the memory store and on Redis; `start` makes a gateway on that store. */
function onEachStore(
  title: string,
  fn: (start: (core: TestUpstream) => Promise<TestGateway>) => Promise<void>,
) {
  onEachStoreShared(title, async (store) => {
    const gateways: TestGateway[] = [];
    try {
      await fn(async (core) => {
        const gateway = await gatewayOn(store, core, policy());
        gateways.push(gateway);
        return gateway;
      });
    } finally {
      for (const gateway of gateways) await gateway.close();
    }
  });
}

onEachStore(
  "consentFrequency() keeps a TPP's reads on another TPP's consent off that TPP's count",
  async (start) => {
    await using core = consentCore();
    const gateway = await start(core);
    const consent = await createConsent(gateway, OWNER);
    assert.deepEqual(await statuses(4, () => read(gateway, OTHER, consent)), [200, 200, 200, 200]);
    assert.equal((await read(gateway, OTHER, consent)).status, 429, "the other TPP's own count");
    const before = reads(core);
    assert.deepEqual(
      await statuses(4, () => read(gateway, OWNER, consent)),
      [200, 200, 200, 200],
      "the owner's first reads of the day are still allowed",
    );
    assert.equal(reads(core) - before, 4, "and reached the core");
  },
);

onEachStore(
  "consentFrequency() counts only the reads the core answered with 2xx",
  async (start) => {
    let status = 401;
    await using core = consentCore(() => status);
    const gateway = await start(core);
    const consent = await createConsent(gateway, OWNER);
    assert.deepEqual(await statuses(6, () => read(gateway, OWNER, consent)), [
      401,
      401,
      401,
      401,
      401,
      401,
    ]);
    status = 200;
    const stats = gateway.store.stats;
    const trips = stats.roundTrips;
    assert.equal((await read(gateway, OWNER, consent)).status, 200);
    assert.equal(stats.roundTrips - trips, 1, "one store round trip for a read the core answered");
    assert.deepEqual(await statuses(4, () => read(gateway, OWNER, consent)), [200, 200, 200, 429]);
    assert.equal(reads(core), 6 + 4, "the read over the count never reached the core");
  },
);

onEachStore(
  "consentFrequency() counts case variants of a UUID consent id as that consent",
  async (start) => {
    await using core = consentCore();
    const gateway = await start(core);
    const consent = await createConsent(gateway, OWNER);
    const variants = [
      consent.toUpperCase(),
      consent.slice(0, 8).toUpperCase() + consent.slice(8),
      consent.slice(0, 8) + consent.slice(8).toUpperCase(),
      consent,
    ];
    for (const variant of variants) assert.equal((await read(gateway, OWNER, variant)).status, 200);
    const over = await read(gateway, OWNER, consent.toUpperCase());
    assert.equal(over.status, 429);
    assert.equal(over.code, "ACCESS_EXCEEDED");
    assert.equal(reads(core), 4);
  },
);

Deno.test("psuIpAddress() with public_only refuses PSU-IP-Address values in loopback, private, link-local or reserved ranges", async () => {
  await using core = consentCore();
  await using gateway = await startGateway({
    policy: policy({}, {
      psu_ip_address: { mode: "enforce", public_only: true, allow_ipv6: true },
    }),
    upstream: core.url,
  });
  const consent = await createConsent(gateway, OWNER);
  const before = reads(core);
  for (
    const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.9",
      "192.168.8.78",
      "100.64.1.1",
      "169.254.169.254",
      "0.0.0.0",
      "192.0.2.10",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "fe80::1",
      "fd00::7",
      "::ffff:127.0.0.1",
      "2001:db8::1",
    ]
  ) {
    const answer = await read(gateway, OWNER, consent, { "psu-ip-address": address });
    assert.equal(answer.status, 400, address);
    assert.equal(answer.code, "FORMAT_ERROR", address);
    assert.equal(answer.path, "PSU-IP-Address", address);
  }
  assert.equal(reads(core) - before, 0, "none reached the core");
  // A public address is taken, and the read is PSU-initiated: not counted.
  assert.deepEqual(
    await statuses(6, () => read(gateway, OWNER, consent, { "psu-ip-address": "81.95.1.1" })),
    [200, 200, 200, 200, 200, 200],
  );
});

Deno.test("psuIpAddress() with public_only in report mode lets a loopback address through, but the read counts as TPP-initiated", async () => {
  await using core = consentCore();
  await using gateway = await startGateway({
    policy: policy({}, { psu_ip_address: { mode: "report", public_only: true } }),
    upstream: core.url,
  });
  const consent = await createConsent(gateway, OWNER);
  const loopback = { "psu-ip-address": "127.0.0.1" };
  assert.deepEqual(
    await statuses(5, () => read(gateway, OWNER, consent, loopback)),
    [200, 200, 200, 200, 429],
  );
  assert.ok(
    gateway.log.lines.some((line) =>
      (line.findings as { check: string }[] | undefined)?.some((f) => f.check === "psu_ip_address")
    ),
  );
});
