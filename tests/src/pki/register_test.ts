import assert from "node:assert/strict";
import {
  parseRegister,
  REGISTER_SCHEMA_FILE,
  registerJsonSchema,
  registerSection,
  TppRegister,
} from "../../../src/pki/register.ts";
import { GatewayError } from "../../../src/core/errors.ts";
import { createMetrics } from "../../../src/lib/metrics.ts";
import { memoryLogger } from "../../../src/lib/log.ts";
import { startUpstream } from "../../support/upstream.ts";
import { withoutSyncFs } from "../../support/no_sync_fs.ts";
import { readPolicyFiles } from "../../../src/lib/policy_files.ts";

const EXAMPLE = "config/tpp_register.example.json";

function entries(list: unknown[]): string {
  return JSON.stringify({ entries: list });
}

const PIS_AND_AIS = {
  id: "PSDGE-NBG-123456",
  country: "GE",
  status: "authorised",
  services: ["PIS", "AIS"],
};

function services(now = () => Date.now()) {
  return { fetch: globalThis.fetch, now, log: memoryLogger(), metrics: createMetrics() };
}

async function code(promise: Promise<void>): Promise<string> {
  try {
    await promise;
    return "passed";
  } catch (error) {
    assert.ok(error instanceof GatewayError, String(error));
    return `${error.status} ${error.code}`;
  }
}

Deno.test(`${REGISTER_SCHEMA_FILE} is the schema generated from the zod schema`, async () => {
  assert.equal(
    await Deno.readTextFile(REGISTER_SCHEMA_FILE),
    registerJsonSchema(),
    `${REGISTER_SCHEMA_FILE} is stale: run deno task policy:schema`,
  );
});

Deno.test("parseRegister() accepts the shipped example and names each problem's path", async () => {
  const example = parseRegister(await Deno.readTextFile(EXAMPLE));
  assert.ok(example instanceof Map, JSON.stringify(example));
  assert.equal(example.get("PSDLT-BOL-LB000123")?.passports?.GE?.[0], "AIS");
  assert.deepEqual(parseRegister(entries([{ ...PIS_AND_AIS, services: ["SEPA"] }])), [
    'entries.0.services.0: Invalid option: expected one of "PIS"|"AIS"|"PIIS"',
  ]);
  assert.deepEqual(parseRegister(entries([PIS_AND_AIS, PIS_AND_AIS])), [
    'entries.1.id: "PSDGE-NBG-123456" is listed twice',
  ]);
  assert.match(String(parseRegister("{")), /is not JSON/);
  assert.match(
    String(parseRegister(entries([{ ...PIS_AND_AIS, id: "NBG-123456" }]))),
    /entries\.0\.id: must be an organizationIdentifier/,
  );
});

Deno.test("trust.register: a bad file is a policy error naming the file and the path inside it", async () => {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(file, entries([{ ...PIS_AND_AIS, status: "gone" }]));
    const parsed = registerSection.safeParse({ source: file });
    assert.equal(parsed.success, false);
    assert.match(parsed.error!.issues[0].message, /file ".*\.json": entries\.0\.status: /);
    const missing = registerSection.safeParse({ source: "/nonexistent/register.json" });
    assert.match(missing.error!.issues[0].message, /cannot read file "\/nonexistent/);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("TppRegister.check() fetches a register URL once, refreshes it after the interval, keeps it when a refresh fails", async () => {
  let body = entries([PIS_AND_AIS]);
  let status = 200;
  await using server = startUpstream(() => new Response(body, { status }));
  let now = Date.now();
  const deps = services(() => now);
  const register = new TppRegister(
    registerSection.parse({ source: `${server.url}/register.json`, refresh_interval: "10m" })!,
    deps,
  );
  assert.equal(await code(register.check("PSDGE-NBG-123456", "pis", "h")), "passed");
  assert.equal(await code(register.check("PSDGE-NBG-123456", "ais", "h")), "passed");
  assert.equal(server.received.length, 1);
  // The authority withdraws the TPP; the register is read again after the interval.
  body = entries([{ ...PIS_AND_AIS, status: "withdrawn" }]);
  now += 11 * 60_000;
  await register.check("PSDGE-NBG-123456", "pis", "h"); // starts the refresh
  for (let i = 0; i < 50 && server.received.length < 2; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(
    await code(register.check("PSDGE-NBG-123456", "pis", "h")),
    "401 CERTIFICATE_BLOCKED",
  );
  // A failing refresh keeps what was loaded.
  status = 500;
  now += 11 * 60_000;
  await code(register.check("PSDGE-NBG-123456", "pis", "h")); // starts the refresh
  for (let i = 0; i < 50 && server.received.length < 3; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(
    await code(register.check("PSDGE-NBG-123456", "pis", "h")),
    "401 CERTIFICATE_BLOCKED",
  );
  assert.equal(deps.metrics.register.value({ outcome: "failed" }), 1);
  assert.ok(deps.log.lines.some((l) => /stay in force/.test(String(l.msg))));
});

Deno.test("TppRegister.check() answers 503 while a register URL cannot be had, without waiting again at once", async () => {
  await using server = startUpstream(() => new Response("down", { status: 503 }));
  const register = new TppRegister(
    registerSection.parse({ source: `${server.url}/register.json` })!,
    services(),
  );
  assert.equal(
    await code(register.check("PSDGE-NBG-123456", "pis", "h")),
    "503 UPSTREAM_UNAVAILABLE",
  );
  assert.equal(
    await code(register.check("PSDGE-NBG-123456", "pis", "h")),
    "503 UPSTREAM_UNAVAILABLE",
  );
  assert.equal(server.received.length, 1);
  assert.equal(await code(register.check("PSDGE-NBG-123456", "products", "h")), "passed");
});

Deno.test("trust.register: a register file is read ahead with the policy, never synchronously (Deno Deploy)", async () => {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(file, entries([PIS_AND_AIS]));
    await readPolicyFiles(`trust:\n  register:\n    source: ${file}\n`);
    const parsed = await withoutSyncFs(() => registerSection.safeParse({ source: file }));
    assert.equal(parsed.success, true, JSON.stringify(parsed.error?.issues));
  } finally {
    await Deno.remove(file);
  }
});
