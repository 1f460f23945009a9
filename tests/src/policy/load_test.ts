import { PIPELINE } from "../../../middleware/mod.ts";
import assert from "node:assert/strict";
import { parsePolicy, PolicyError, policyJsonSchema } from "../../../src/policy/load.ts";
import { createCa } from "../../support/pki.ts";
import { OPERATIONS } from "../../../src/psd2/catalogue.ts";
import { defineCheck, modal } from "../../../src/core/check.ts";
import { z } from "zod";

const env = (name: string) =>
  ({ UPSTREAM_URL: "http://127.0.0.1:9" } as Record<string, string>)[name];

function problems(text: string): string[] {
  try {
    parsePolicy("bad.yaml", text, { ...PIPELINE, env });
  } catch (error) {
    assert.ok(error instanceof PolicyError);
    assert.match(error.message, /bad\.yaml/);
    return error.problems;
  }
  assert.fail("the policy was accepted");
}

const BASE = "upstream:\n  url: ${UPSTREAM_URL}\n";

Deno.test("parsePolicy() resolves defaults, group and operation overrides field by field", () => {
  const policy = parsePolicy(
    "p.yaml",
    BASE + `
defaults:
  proxy: { timeout: 1s, retry_reads: false }
groups:
  ais:
    proxy: { timeout: 2s }
operations:
  getBalances:
    proxy: { timeout: 3000ms }
`,
    { ...PIPELINE, env },
  );
  const options = (id: string) =>
    policy.operations.find((r) => r.operation.id === id)!.options.proxy;
  assert.equal(options("initiatePayment").timeout, 1000);
  assert.equal(options("getAccountList").timeout, 2000);
  assert.equal(options("getBalances").timeout, 3000);
  assert.equal(options("getBalances").retry_reads, false);
  assert.equal(options("getBalances").max_response_bytes, 10_485_760);
});

Deno.test("parsePolicy() lists every problem with its path", () => {
  const found = problems(
    BASE + `
defaults:
  proxy: { timeout: -1s, retrys: true }
  rate_limt: {}
groups:
  payments: {}
operations:
  initiatePaymnt: {}
`,
  );
  assert.ok(
    found.includes('defaults: unknown key "rate_limt"') ||
      found.some((p) => p.includes('"rate_limt"')),
    found.join("\n"),
  );
  assert.ok(found.some((p) => p.startsWith("defaults.proxy.timeout:")), found.join("\n"));
  assert.ok(
    found.some((p) => p.startsWith("defaults.proxy") && p.includes('"retrys"')),
    found.join("\n"),
  );
  assert.ok(found.includes('groups: unknown group "payments"'), found.join("\n"));
  assert.ok(found.includes('operations: unknown operation "initiatePaymnt"'), found.join("\n"));
});

Deno.test("parsePolicy() refuses an unset environment variable and YAML syntax errors", () => {
  assert.deepEqual(problems("upstream:\n  url: ${NOT_SET_ANYWHERE}\n").slice(0, 1), [
    'upstream.url: environment variable "NOT_SET_ANYWHERE" is not set',
  ]);
  assert.match(problems("upstream: [unclosed\n")[0], /^line \d+:/);
});

Deno.test("parsePolicy() accepts ${NAME:-default} references", () => {
  const policy = parsePolicy("p.yaml", "upstream:\n  url: ${NOPE:-http://127.0.0.1:7}\n", {
    ...PIPELINE,
    env,
  });
  assert.equal(policy.upstream.url, "http://127.0.0.1:7");
});

Deno.test("parsePolicy() applies route overrides and checks their parameters", () => {
  const policy = parsePolicy(
    "p.yaml",
    BASE + `
operations:
  getTransactionDetails:
    route:
      upstream_path: /core/accounts/{account-id}/tx/{transactionId}
`,
    { ...PIPELINE, env },
  );
  const op = policy.operations.find((r) => r.operation.id === "getTransactionDetails")!;
  assert.equal(op.operation.upstreamPath, "/core/accounts/{account-id}/tx/{transactionId}");
  const found = problems(
    BASE + `
operations:
  getBalances:
    route: { path: "/v1/balances/{accountId}" }
`,
  );
  assert.match(
    found[0],
    /^operations\.getBalances\.route\.path: must use the parameters \{account-id\}/,
  );
});

Deno.test("parsePolicy() runs cross-field rules of a check", () => {
  const found = problems(
    BASE + `
defaults:
  deprecation: { since: "2026-05-01", sunset: "2026-01-01" }
`,
  );
  assert.ok(
    found.some((p) => p.includes('sunset "2026-01-01" is before since "2026-05-01"')),
    found.join("\n"),
  );
});

Deno.test("parsePolicy() keeps an idempotency marker at least as long as a request may be in flight", () => {
  const found = problems(BASE + "defaults:\n  idempotency: { inflight: 2m, retention: 1m }\n");
  assert.ok(
    found.some((p) => p.includes("retention must not be shorter than inflight")),
    found.join("\n"),
  );
});

Deno.test("the default and production example policy files are valid", async () => {
  const ca = await createCa();
  const bundle = await Deno.makeTempFile({ suffix: ".pem" });
  await Deno.writeTextFile(bundle, ca.pem);
  const production: Record<string, string> = {
    UPSTREAM_URL: "https://core.bank.internal",
    STORE_URL: "redis://redis.bank.internal:6379",
    QTSP_CA_BUNDLE: bundle,
    OAUTH_JWKS_URL: "https://auth.bank.internal/jwks.json",
    OAUTH_ISSUER: "https://auth.bank.internal",
    METRICS_TOKEN: "a-long-enough-metrics-token",
    OAUTH_INTROSPECTION_URL: "https://auth.bank.internal/introspect",
    OAUTH_CLIENT_SECRET: "a-client-secret",
    TPP_REGISTER_URL: "https://register.bank.internal/tpp_register.json",
  };
  const policy = parsePolicy("config/policy.yaml", await Deno.readTextFile("config/policy.yaml"), {
    ...PIPELINE,
    env,
  });
  assert.equal(policy.operations.length, OPERATIONS.length);
  const strict = parsePolicy(
    "config/production.example.yaml",
    await Deno.readTextFile("config/production.example.yaml"),
    { ...PIPELINE, env: (name) => production[name] },
  );
  const options = (id: string, key: string) =>
    strict.operations.find((r) => r.operation.id === id)!.options[key];
  assert.equal(options("initiatePayment", "jws_signature").required, true);
  assert.equal(options("initiatePayment", "tpp_certificate").required, true);
  assert.equal(options("getProducts", "tpp_certificate").required, false);
  assert.equal(options("getBalances", "jws_signature").required, false);
  assert.equal(options("checkAvailabilityOfFunds", "jws_signature").required, true);
  assert.equal(options("checkAvailabilityOfFunds", "digest").required, true);
  assert.equal(options("checkAvailabilityOfFunds", "consent_id").required, false);
  assert.equal(strict.store.kind, "redis");
});

Deno.test("config/policy.schema.json is the schema generated from the zod schemas", async () => {
  const committed = await Deno.readTextFile("config/policy.schema.json");
  assert.equal(
    committed,
    policyJsonSchema(PIPELINE),
    "config/policy.schema.json is stale: run deno task policy:schema",
  );
});

/** The hunks of lines `after` adds to `before` and removes from it (a longest common subsequence). */
function lineDiff(before: string, after: string): { added: string[]; removed: string[] } {
  const a = before.split("\n");
  const b = after.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (
    end < a.length - start && end < b.length - start &&
    a[a.length - 1 - end] === b[b.length - 1 - end]
  ) end++;
  const x = a.slice(start, a.length - end);
  const y = b.slice(start, b.length - end);
  // lengths[i][j]: the longest common subsequence of x[i..] and y[j..]
  const width = y.length + 1;
  const lengths = new Uint32Array((x.length + 1) * width);
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      lengths[i * width + j] = x[i] === y[j]
        ? lengths[(i + 1) * width + j + 1] + 1
        : Math.max(lengths[(i + 1) * width + j], lengths[i * width + j + 1]);
    }
  }
  const added: string[] = [];
  const removed: string[] = [];
  let hunk: { added: string[]; removed: string[] } = { added: [], removed: [] };
  const close = () => {
    if (hunk.added.length) added.push(hunk.added.join("\n"));
    if (hunk.removed.length) removed.push(hunk.removed.join("\n"));
    hunk = { added: [], removed: [] };
  };
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      close();
      i++;
      j++;
    } else if (
      j < y.length && (i === x.length || lengths[i * width + j + 1] >= lengths[(i + 1) * width + j])
    ) hunk.added.push(y[j++]);
    else hunk.removed.push(x[i++]);
  }
  close();
  return { added, removed };
}

/** A check that exists only here: what a new check's author adds to middleware/mod.ts. */
const NEW_CHECK = defineCheck({
  key: "new_check",
  description: "A check added after the schema was committed",
  options: modal({
    limit: z.number().int().positive().default(3).describe("How many times at most"),
  }),
  create: () => undefined,
});

/** The lines of some hunks, sorted. */
function lines(hunks: string[]): string[] {
  return hunks.flatMap((hunk) => hunk.split("\n")).sort();
}

/** `lines` as they sit in the schema at `depth` levels of JSON.stringify's two-space indent. */
function indented(lines: string, depth: number): string {
  return lines.split("\n").map((line) => " ".repeat(2 * depth) + line).join("\n");
}

Deno.test("policyJsonSchema() changes by a new check's own lines only, wherever the check is added", () => {
  const before = policyJsonSchema(PIPELINE);
  const definition = JSON.parse(
    policyJsonSchema({ ...PIPELINE, checks: [NEW_CHECK] }),
  ).$defs["check.new_check"];
  assert.ok(definition, "the new check's options are a definition named after it");
  const reference = indented(
    `"new_check": {\n  "$ref": "#/$defs/check.new_check"\n},`,
    4,
  );
  const own = [
    reference, // in `level`, the options of defaults and groups
    indented(`"check.new_check": ${JSON.stringify(definition, null, 2)},`, 2),
    reference, // in `operation_level`
  ];
  for (const at of [0, 11, PIPELINE.checks.length]) {
    const checks = PIPELINE.checks.toSpliced(at, 0, NEW_CHECK);
    const diff = lineDiff(before, policyJsonSchema({ ...PIPELINE, checks }));
    // A hunk's place among equal lines ("},") is a matter of alignment: compared as lines.
    assert.deepEqual(diff.removed, [], `the new check at ${at}`);
    assert.equal(diff.added.length, own.length, `the new check at ${at}`);
    assert.deepEqual(lines(diff.added), lines(own), `the new check at ${at}`);
  }
});

Deno.test("policyJsonSchema() names every definition after what it describes, never by a number", () => {
  const names = Object.keys(JSON.parse(policyJsonSchema(PIPELINE)).$defs);
  assert.deepEqual(names, [
    "level",
    ...[...PIPELINE.checks, PIPELINE.terminal].map((check) => `check.${check.key}`),
    "operation_level",
  ]);
  assert.deepEqual(names.filter((name) => /^__schema\d+$/.test(name)), []);
});

Deno.test("parsePolicy() lists a problem shared by many operations once", () => {
  const found = problems(
    BASE + `
defaults:
  deprecation: { since: "2026-05-01", sunset: "2026-01-01" }
groups:
  ais:
    deprecation: { since: "2026-01-01" }
`,
  );
  const lines = found.filter((p) => p.startsWith("deprecation for"));
  assert.equal(lines.length, 1, found.join("\n"));
  assert.match(
    lines[0],
    /^deprecation for initiatePayment, getPaymentInformation, .* and \d+ more: sunset/,
  );
  assert.doesNotMatch(lines[0], /getAccountList/);
});

Deno.test("parsePolicy() picks the http1 upstream client by default, on Deno Deploy too", () => {
  assert.equal(parsePolicy("p.yaml", BASE, { ...PIPELINE, env }).upstream.client, "http1");
  assert.equal(
    parsePolicy("p.yaml", BASE + "  client: fetch\n", { ...PIPELINE, env }).upstream.client,
    "fetch",
  );
  const at = (url: string, more = "") =>
    parsePolicy("p.yaml", `upstream:\n  url: ${url}\n${more}`, { ...PIPELINE, env }).upstream
      .client;
  Deno.env.set("DENO_DEPLOYMENT_ID", "test-deployment");
  try {
    // Deploy refuses Deno.connect to port 443 only; https goes over Deno.connectTls (http1).
    assert.equal(at("https://core.bank.example"), "http1");
    assert.equal(at("https://core.bank.example:8443"), "http1");
    assert.equal(at("http://core.bank.example:8080"), "http1");
    assert.equal(at("http://core.bank.example:443", "  client: fetch\n"), "fetch");
    assert.throws(
      () => at("http://core.bank.example:443"),
      /upstream\.url: Deno Deploy refuses plain TCP to port 443: use an https URL/,
    );
  } finally {
    Deno.env.delete("DENO_DEPLOYMENT_ID");
  }
  assert.equal(at("http://core.bank.example:443"), "http1", "elsewhere port 443 is a port");
  assert.deepEqual(problems(BASE + "  client: curl\n").length, 1);
});

Deno.test("parsePolicy() reads every time option as a duration and names the new option for an old one", () => {
  const policy = parsePolicy(
    "p.yaml",
    BASE + `
store: { timeout: 250ms }
trust: { clock_skew: 2m }
defaults:
  body_limit: { read_timeout: 5s }
  jws_signature: { sigt_skew: 90s }
`,
    { ...PIPELINE, env },
  );
  assert.equal(policy.store.timeout, 250);
  assert.equal(policy.trust.clock_skew, 120_000);
  const options = policy.operations[0].options;
  assert.equal(options.body_limit.read_timeout, 5000);
  assert.equal(options.jws_signature.sigt_skew, 90_000);
  assert.equal(options.proxy.timeout, 10_000, "the default, 10s");

  const found = problems(
    BASE + `
store: { timeout_ms: 500 }
defaults:
  proxy: { timeout_ms: 10000 }
  bearer_token: { timeout: 2s, leeway_seconds: 30 }
  body_limit: { read_timeout: 10000 }
`,
  );
  assert.ok(
    found.includes('store: unknown key "timeout_ms" (now timeout, a duration such as "10s")'),
    found.join("\n"),
  );
  assert.ok(
    found.includes(
      'defaults.proxy: unknown key "timeout_ms" (now timeout, a duration such as "10s")',
    ),
    found.join("\n"),
  );
  assert.ok(
    found.includes(
      'defaults.bearer_token: unknown key "timeout", "leeway_seconds" (now leeway, a duration such as "30s")',
    ),
    found.join("\n"),
  );
  assert.ok(
    found.some((p) =>
      p.startsWith(
        'defaults.body_limit.read_timeout: must be a duration with a unit, such as "500ms"',
      )
    ),
    found.join("\n"),
  );
});

Deno.test("parsePolicy() refuses an upstream prefix with a dot segment", () => {
  assert.deepEqual(
    problems("upstream:\n  url: ${UPSTREAM_URL}\n  prefix: /psd2/../admin\n"),
    ['upstream.prefix: must not contain a . or .. segment (also percent-encoded), got "/psd2/../admin"'],
  );
});
