import assert from "node:assert/strict";
import {
  parseRegister,
  REGISTER_SCHEMA_FILE,
  registerJsonSchema,
  registerSection,
  TppRegister,
  tppRegister,
} from "../../../src/pki/register.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";
import { createMetrics } from "../../../src/lib/metrics.ts";
import { memoryLogger } from "../../../src/lib/log.ts";
import { startUpstream } from "../../support/upstream.ts";
import { waitFor } from "../../support/wait.ts";
import { startFaultyUpstream } from "../../support/faulty_upstream.ts";
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
    assert.deepEqual(parsed.error!.issues[0].path, ["source"]);
    const missing = registerSection.safeParse({ source: "/nonexistent/register.json" });
    assert.match(missing.error!.issues[0].message, /cannot read file "\/nonexistent/);
    assert.deepEqual(missing.error!.issues[0].path, ["source"]);
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
  assert.ok(await waitFor(() => deps.metrics.register.value({ outcome: "loaded" }) === 2));
  assert.equal(
    await code(register.check("PSDGE-NBG-123456", "pis", "h")),
    "401 CERTIFICATE_BLOCKED",
  );
  // A failing refresh keeps what was loaded.
  status = 500;
  now += 11 * 60_000;
  await code(register.check("PSDGE-NBG-123456", "pis", "h")); // starts the refresh
  assert.ok(await waitFor(() => deps.metrics.register.value({ outcome: "failed" }) === 1));
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

// The rules of check(), against a register file read with the policy.

const FOREIGN = {
  id: "PSDLT-BOL-LB000123",
  country: "LT",
  status: "authorised",
  services: ["PIS", "AIS", "PIIS"],
  passports: { GE: ["AIS"], LV: ["PIS"] },
};

/** A register of `list` read from a file, as a policy loads it. */
async function fileRegister(
  list: unknown[],
  config: Record<string, unknown> = {},
  deps = services(),
): Promise<TppRegister> {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(file, entries(list));
    return new TppRegister(registerSection.parse({ source: file, ...config })!, deps);
  } finally {
    await Deno.remove(file);
  }
}

/** The GatewayError of a refused check, as status, code, text and path. */
async function refusal(promise: Promise<void>) {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof GatewayError, String(error));
    return [error.status, error.code, error.message, error.path];
  }
  return "passed";
}

Deno.test("TppRegister.check() refuses a TPP absent from the register, suspended or withdrawn", async () => {
  const register = await fileRegister([
    PIS_AND_AIS,
    { ...PIS_AND_AIS, id: "PSDGE-NBG-000001", status: "suspended" },
    { ...PIS_AND_AIS, id: "PSDGE-NBG-000002", status: "withdrawn" },
    { ...PIS_AND_AIS, id: "PSDGE-NBG-000003", status: "registered", services: ["AIS"] },
  ]);
  assert.equal(await refusal(register.check("PSDGE-NBG-123456", "pis", "h")), "passed");
  assert.equal(await refusal(register.check("PSDGE-NBG-000003", "ais", "h")), "passed");
  assert.deepEqual(await refusal(register.check("PSDGE-NBG-999999", "pis", "Client-Cert")), [
    401,
    "CERTIFICATE_BLOCKED",
    'TPP "PSDGE-NBG-999999" is not in the TPP register of authorised TPPs',
    "Client-Cert",
  ]);
  assert.deepEqual(await refusal(register.check("PSDGE-NBG-000001", "ais", "h")), [
    401,
    "CERTIFICATE_BLOCKED",
    `TPP "PSDGE-NBG-000001"'s authorisation is suspended in the TPP register`,
    "h",
  ]);
  assert.deepEqual(await refusal(register.check("PSDGE-NBG-000002", "ais", "h")), [
    401,
    "CERTIFICATE_BLOCKED",
    `TPP "PSDGE-NBG-000002"'s authorisation is withdrawn in the TPP register`,
    "h",
  ]);
});

Deno.test("TppRegister.check() wants one of the group's services, and names them when it refuses", async () => {
  const register = await fileRegister([
    { ...PIS_AND_AIS, services: ["AIS"] },
    { ...PIS_AND_AIS, id: "PSDGE-NBG-000004", services: [] },
    { ...PIS_AND_AIS, id: "PSDGE-NBG-000005", services: ["PIIS"] },
  ], { services: { pis: ["PIS", "PIIS"] } });
  assert.equal(await refusal(register.check("PSDGE-NBG-123456", "consents", "h")), "passed");
  assert.equal(await refusal(register.check("PSDGE-NBG-000005", "pis", "h")), "passed");
  assert.deepEqual(await refusal(register.check("PSDGE-NBG-123456", "pis", "h")), [
    401,
    "ROLE_INVALID",
    'TPP "PSDGE-NBG-123456" is not authorised for payment initiation (PIS) or funds confirmation (PIIS) in the TPP register; it is for AIS',
    "h",
  ]);
  assert.deepEqual(await refusal(register.check("PSDGE-NBG-000004", "ais", "h")), [
    401,
    "ROLE_INVALID",
    'TPP "PSDGE-NBG-000004" is not authorised for account information (AIS) in the TPP register; it is for none',
    "h",
  ]);
  // A group that needs no service is not looked up: any TPP passes.
  assert.equal(await refusal(register.check("PSDGE-NBG-999999", "checkout", "h")), "passed");
});

Deno.test("TppRegister.check() counts a foreign TPP's passported services in the bank's country", async () => {
  const list = [FOREIGN, { ...FOREIGN, id: "PSDLT-BOL-LB000124", passports: undefined }];
  const here = await fileRegister([...list, PIS_AND_AIS], { country: "GE" });
  assert.equal(await refusal(here.check("PSDLT-BOL-LB000123", "ais", "h")), "passed");
  assert.deepEqual(await refusal(here.check("PSDLT-BOL-LB000123", "pis", "h")), [
    401,
    "ROLE_INVALID",
    'TPP "PSDLT-BOL-LB000123" (authorised in LT) has payment initiation (PIS) not passported to GE in the TPP register',
    "h",
  ]);
  assert.equal(
    (await refusal(here.check("PSDLT-BOL-LB000124", "ais", "h")) as unknown[])[1],
    "ROLE_INVALID",
  );
  // A TPP of the bank's own country: its home services.
  assert.equal(await refusal(here.check("PSDGE-NBG-123456", "pis", "h")), "passed");
  // Without a country, the home services count everywhere.
  const anywhere = await fileRegister(list);
  assert.equal(await refusal(anywhere.check("PSDLT-BOL-LB000123", "pis", "h")), "passed");
  assert.equal(await refusal(anywhere.check("PSDLT-BOL-LB000124", "pis", "h")), "passed");
});

Deno.test("TppRegister.check() reads a register file again after the interval, not before", async () => {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(file, entries([PIS_AND_AIS]));
    let now = Date.now();
    const deps = services(() => now);
    const register = new TppRegister(
      registerSection.parse({ source: file, refresh_interval: "10m" })!,
      deps,
    );
    await Deno.writeTextFile(file, entries([{ ...PIS_AND_AIS, status: "withdrawn" }]));
    now += 10 * 60_000 - 1;
    assert.equal(await code(register.check("PSDGE-NBG-123456", "pis", "h")), "passed");
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(await code(register.check("PSDGE-NBG-123456", "pis", "h")), "passed");
    assert.equal(deps.metrics.register.value({ outcome: "loaded" }), 0);
    now += 1;
    await register.check("PSDGE-NBG-123456", "pis", "h"); // starts the refresh
    assert.ok(await waitFor(() => deps.metrics.register.value({ outcome: "loaded" }) === 1));
    assert.equal(
      await code(register.check("PSDGE-NBG-123456", "pis", "h")),
      "401 CERTIFICATE_BLOCKED",
    );
    assert.equal(deps.metrics.register.value({ outcome: "loaded" }), 1);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("TppRegister.check() tries a register URL again 30 s after a failure, or after a shorter interval", async () => {
  let status = 503;
  await using server = startUpstream(() => new Response(entries([PIS_AND_AIS]), { status }));
  let now = Date.now();
  const deps = services(() => now);
  const register = new TppRegister(
    registerSection.parse({ source: `${server.url}/register.json` })!,
    deps,
  );
  assert.equal(
    await code(register.check("PSDGE-NBG-123456", "pis", "h")),
    "503 UPSTREAM_UNAVAILABLE",
  );
  now += 29_999;
  assert.equal(
    await code(register.check("PSDGE-NBG-123456", "pis", "h")),
    "503 UPSTREAM_UNAVAILABLE",
  );
  assert.equal(server.received.length, 1);
  status = 200;
  now += 1;
  assert.equal(await code(register.check("PSDGE-NBG-123456", "pis", "h")), "passed");
  assert.equal(server.received.length, 2);
  assert.equal(server.received[0].headers.get("accept"), "application/json");
  assert.equal(deps.metrics.register.value({ outcome: "failed" }), 1);
  assert.equal(deps.metrics.register.value({ outcome: "loaded" }), 1);
  assert.deepEqual(deps.log.lines, [{
    level: "error",
    msg: "tpp register unavailable",
    source: `${server.url}/register.json`,
    error: "Error: HTTP 503",
  }]);

  // With an interval under 30 s, the interval.
  status = 503;
  let soon = Date.now();
  const quick = new TppRegister(
    registerSection.parse({ source: `${server.url}/quick.json`, refresh_interval: "5s" })!,
    services(() => soon),
  );
  await code(quick.check("PSDGE-NBG-123456", "pis", "h"));
  status = 200;
  soon += 4_999;
  assert.equal(await code(quick.check("PSDGE-NBG-123456", "pis", "h")), "503 UPSTREAM_UNAVAILABLE");
  soon += 1;
  assert.equal(await code(quick.check("PSDGE-NBG-123456", "pis", "h")), "passed");
});

Deno.test("TppRegister.check() makes concurrent first checks wait for one download", async () => {
  await using server = startUpstream(async () => {
    await new Promise((r) => setTimeout(r, 100));
    return new Response(entries([PIS_AND_AIS]));
  });
  const register = new TppRegister(
    registerSection.parse({ source: `${server.url}/register.json` })!,
    services(),
  );
  const answers = await Promise.all(
    Array.from({ length: 5 }, () => code(register.check("PSDGE-NBG-123456", "pis", "h"))),
  );
  assert.deepEqual(answers, Array(5).fill("passed"));
  assert.equal(server.received.length, 1);
});

Deno.test("TppRegister.check() gives up a register download after fetch_timeout", async () => {
  // The server answers only once the download was given up.
  const held = Promise.withResolvers<void>();
  await using server = startUpstream(async () => {
    await held.promise;
    return new Response(entries([PIS_AND_AIS]));
  });
  const deps = services();
  const register = new TppRegister(
    registerSection.parse({ source: `${server.url}/register.json`, fetch_timeout: "100ms" })!,
    deps,
  );
  assert.equal(
    await code(register.check("PSDGE-NBG-123456", "pis", "h")).finally(held.resolve),
    "503 UPSTREAM_UNAVAILABLE",
  );
  assert.match(String(deps.log.lines[0].error), /timed out|abort/i);
});

Deno.test("TppRegister.check() refuses a register download over max_bytes, declared or not", async () => {
  const body = entries([PIS_AND_AIS]);
  let chunked = false;
  await using server = startUpstream(() =>
    chunked
      ? new Response(ReadableStream.from([new TextEncoder().encode(body)]))
      : new Response(body)
  );
  const load = async (max: number) => {
    const deps = services();
    const register = new TppRegister(
      registerSection.parse({ source: `${server.url}/register.json`, max_bytes: max })!,
      deps,
    );
    return [await code(register.check("PSDGE-NBG-123456", "pis", "h")), deps.log.lines[0]?.error];
  };
  for (const mode of [false, true]) {
    chunked = mode;
    assert.deepEqual(await load(body.length), ["passed", undefined], `chunked: ${mode}`);
    assert.deepEqual(
      await load(body.length - 1),
      ["503 UPSTREAM_UNAVAILABLE", `Error: larger than ${body.length - 1} bytes`],
      `chunked: ${mode}`,
    );
  }
});

Deno.test("TppRegister.check() keeps the entries when a refresh brings a bad register, and says why", async () => {
  let body = entries([PIS_AND_AIS]);
  await using server = startUpstream(() => new Response(body));
  let now = Date.now();
  const deps = services(() => now);
  const register = new TppRegister(
    registerSection.parse({ source: `${server.url}/register.json`, refresh_interval: "1m" })!,
    deps,
  );
  assert.equal(await code(register.check("PSDGE-NBG-123456", "pis", "h")), "passed");
  body = JSON.stringify({
    entries: Array.from({ length: 7 }, (_, i) => ({ ...PIS_AND_AIS, country: `G${i}` })),
  });
  now += 60_000;
  await register.check("PSDGE-NBG-123456", "pis", "h");
  assert.ok(await waitFor(() => deps.log.lines.length > 0), "the failed refresh is logged");
  assert.equal(await code(register.check("PSDGE-NBG-123456", "pis", "h")), "passed");
  const [line] = deps.log.lines;
  assert.equal(line.msg, "tpp register refresh failed; the entries loaded before stay in force");
  assert.equal(
    line.error,
    "Error: " + Array.from(
      { length: 5 },
      (_, i) => `entries.${i}.country: must be an ISO 3166-1 alpha-2 country code`,
    ).join("; "),
  );
});

Deno.test("tppRegister() keeps one register per loaded policy and app", () => {
  const config = registerSection.parse({ source: "https://register.example/tpp.json" })!;
  const deps = services();
  assert.equal(tppRegister(config, deps), tppRegister(config, deps));
  assert.notEqual(tppRegister(config, deps), tppRegister(config, services()));
  const again = registerSection.parse({ source: "https://register.example/tpp.json" })!;
  assert.notEqual(tppRegister(again, deps), tppRegister(config, deps));
});

Deno.test("registerSection: defaults, and an http(s) source of any case is a URL, not a file", () => {
  const config = registerSection.parse({ source: "HTTPS://register.example/tpp.json" })!;
  assert.equal(config.initial, undefined);
  assert.equal(config.refresh_interval, 3_600_000);
  assert.equal(config.fetch_timeout, 5_000);
  assert.equal(config.max_bytes, 32 * 1024 * 1024);
  assert.deepEqual(config.services, {
    pis: ["PIS"],
    ais: ["AIS"],
    consents: ["AIS"],
    cards: ["AIS"],
    piis: ["PIIS"],
    baskets: ["PIS", "AIS"],
    checkout: [],
    installment: [],
    products: [],
  });
  assert.equal(registerSection.safeParse({ source: "" }).success, false);
  assert.equal(registerSection.safeParse({ source: "x", extra: 1 }).success, false);
});

Deno.test("parseRegister() holds each entry to the register's form", () => {
  const problems = (entry: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    parseRegister(JSON.stringify({ entries: [{ ...PIS_AND_AIS, ...entry }], ...extra }));
  for (
    const id of [
      "XPSDGE-NBG-123456",
      "PSDGE-NBG-123456 x",
      "PSDge-NBG-1",
      "PSDGE-N-1",
      "PSDGE-NBG-",
    ]
  ) {
    assert.ok(Array.isArray(problems({ id })), id);
  }
  assert.ok(problems({ id: "PSDGE-NBG12345-a.b_c-1" }) instanceof Map);
  for (const country of ["GEO", "ge", "G", "XGE", "GEX"]) {
    assert.ok(Array.isArray(problems({ country })), country);
  }
  assert.ok(Array.isArray(problems({ name: "" })));
  assert.ok(Array.isArray(problems({ extra: true })));
  assert.ok(Array.isArray(problems({ passports: { ge: ["AIS"] } })));
  assert.ok(Array.isArray(problems({}, { updated: "2026-05-01" })));
  assert.ok(problems({}, { updated: "2026-05-01T06:00:00+02:00" }) instanceof Map);
  assert.deepEqual(parseRegister("[]"), ["(root): Invalid input: expected object, received array"]);
  const map = parseRegister(entries([PIS_AND_AIS, FOREIGN]));
  assert.ok(map instanceof Map);
  assert.deepEqual([...map.keys()], ["PSDGE-NBG-123456", "PSDLT-BOL-LB000123"]);
  assert.deepEqual(map.get("PSDGE-NBG-123456"), PIS_AND_AIS);
});

Deno.test("TppRegister.check() names every service a TPP has when it lacks the group's", async () => {
  const register = await fileRegister([{ ...PIS_AND_AIS, services: ["AIS", "PIIS"] }]);
  assert.deepEqual(await refusal(register.check("PSDGE-NBG-123456", "pis", "h")), [
    401,
    "ROLE_INVALID",
    'TPP "PSDGE-NBG-123456" is not authorised for payment initiation (PIS) in the TPP register; it is for AIS, PIIS',
    "h",
  ]);
});

Deno.test("TppRegister.check() answers 503 with a text and Retry-After while there is no register", async () => {
  await using server = startUpstream(() => new Response("down", { status: 503 }));
  const register = new TppRegister(
    registerSection.parse({ source: `${server.url}/register.json` })!,
    services(),
  );
  const error = await register.check("PSDGE-NBG-123456", "pis", "h").catch((e) => e);
  assert.ok(error instanceof GatewayError);
  assert.equal(error.message, "The TPP register is unavailable now");
  assert.deepEqual(error.headers, { "retry-after": "5" });
});

Deno.test("TppRegister.check() refuses a declared register size over max_bytes before reading the body", async () => {
  // The head declares a megabyte, the body never comes: only the declaration can refuse it.
  await using server = startFaultyUpstream({
    kind: "raw",
    parts: [{
      bytes:
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n{",
    }],
  });
  const deps = services();
  const register = new TppRegister(
    registerSection.parse({
      source: `${server.url}/register.json`,
      max_bytes: 1000,
      fetch_timeout: "2s",
    })!,
    deps,
  );
  assert.equal(
    await code(register.check("PSDGE-NBG-123456", "pis", "h")),
    "503 UPSTREAM_UNAVAILABLE",
  );
  // The limit, not fetch_timeout, ended the download (the body never ends).
  assert.equal(deps.log.lines[0].error, "Error: larger than 1000 bytes");
});

Deno.test("TppRegister.check() logs the status of a register answer without a body", async () => {
  await using server = startUpstream(() => new Response(null, { status: 304 }));
  const deps = services();
  const register = new TppRegister(
    registerSection.parse({ source: `${server.url}/register.json` })!,
    deps,
  );
  assert.equal(
    await code(register.check("PSDGE-NBG-123456", "pis", "h")),
    "503 UPSTREAM_UNAVAILABLE",
  );
  assert.equal(deps.log.lines[0].error, "Error: HTTP 304");
});

Deno.test("trust.register: a file path that holds http:// is a file, at load and at refresh", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-register-" });
  try {
    await Deno.mkdir(`${dir}/http:`);
    const source = `${dir}/http://register.json`;
    await Deno.writeTextFile(source, entries([{ ...PIS_AND_AIS, status: "gone" }]));
    assert.equal(registerSection.safeParse({ source }).success, false);
    await Deno.writeTextFile(source, entries([PIS_AND_AIS]));
    let now = Date.now();
    const deps = services(() => now);
    const register = new TppRegister(
      registerSection.parse({ source, refresh_interval: "1m" })!,
      deps,
    );
    await Deno.writeTextFile(source, entries([{ ...PIS_AND_AIS, status: "suspended" }]));
    now += 60_000;
    await register.check("PSDGE-NBG-123456", "pis", "h"); // starts the refresh
    assert.ok(await waitFor(() => deps.metrics.register.value({ outcome: "loaded" }) === 1));
    assert.equal(
      await code(register.check("PSDGE-NBG-123456", "pis", "h")),
      "401 CERTIFICATE_BLOCKED",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("registerSection: refresh_interval of at least 1s, fetch_timeout of at most 24d", () => {
  const parse = (extra: Record<string, unknown>) =>
    registerSection.safeParse({ source: "https://register.example/tpp.json", ...extra }).success;
  assert.equal(parse({ refresh_interval: "1s" }), true);
  assert.equal(parse({ refresh_interval: "999ms" }), false);
  assert.equal(parse({ fetch_timeout: "24d" }), true);
  assert.equal(parse({ fetch_timeout: "25d" }), false);
});
