/**
 * The bench's policy files (bench/policies.ts) load, and the production rows run the production
 * example as it ships but for what the bench must substitute: the terminator and limits out of
 * reach. A row on a changed example would measure another gateway than a bank's.
 */
import assert from "node:assert/strict";
import { PIPELINE } from "../middleware/mod.ts";
import { parsePolicy, type Policy } from "../src/policy/load.ts";
import {
  defaultPolicyFile,
  featuresPolicyFile,
  passthroughPolicyFile,
  productionPolicyFile,
  shadowPolicyFile,
  signedPolicyFile,
  writeFloorPolicyFile,
} from "../bench/policies.ts";
import { createCa } from "./support/pki.ts";
import { signedPostFixture } from "./support/signing.ts";
import { setDefaultStoreKind } from "../src/sections/sections.ts";

const OUT_OF_REACH = 1_000_000_000;

async function parse(file: string, env: Record<string, string>): Promise<Policy> {
  return parsePolicy(file, await Deno.readTextFile(file), {
    ...PIPELINE,
    env: (name) => env[name],
  });
}

async function productionEnv(): Promise<Record<string, string>> {
  const bundle = await Deno.makeTempFile({ suffix: ".pem" });
  await Deno.writeTextFile(bundle, (await createCa()).pem);
  return {
    UPSTREAM_URL: "http://127.0.0.1:9",
    STORE_URL: "redis://127.0.0.1:6379",
    QTSP_CA_BUNDLE: bundle,
    OAUTH_JWKS_URL: "http://127.0.0.1:9/jwks.json",
    OAUTH_ISSUER: "https://auth.bank.example",
    METRICS_TOKEN: "a-long-enough-metrics-token",
    OAUTH_INTROSPECTION_URL: "http://127.0.0.1:9/introspect",
    OAUTH_CLIENT_SECRET: "a-client-secret",
    TPP_REGISTER_URL: "http://127.0.0.1:9/tpp_register.json",
  };
}

type Limits = Record<string, { limit: number }>;

Deno.test("the production rows run the example but for its terminator and its limits", async () => {
  const env = await productionEnv();
  const example = await parse("config/production.example.yaml", env);
  const bench = await parse(await productionPolicyFile(), env);
  assert.deepEqual(bench.trust.terminators, ["127.0.0.1/32"]);
  assert.deepEqual(
    { ...bench.trust, terminators: [] },
    { ...example.trust, terminators: [] },
    "trust as the example has it",
  );
  assert.deepEqual(bench.store, example.store);
  assert.equal(bench.operations.length, example.operations.length);
  let lifted = 0;
  for (const [i, resolved] of bench.operations.entries()) {
    const shipped = example.operations[i];
    const { rate_limit: benchLimit, ...benchRest } = resolved.options;
    const { rate_limit: shippedLimit, ...shippedRest } = shipped.options;
    assert.deepEqual(benchRest, shippedRest, `${resolved.operation.id}: the example's options`);
    const limits = (benchLimit as { limits: Limits }).limits;
    const shippedLimits = (shippedLimit as { limits: Limits }).limits;
    assert.deepEqual(Object.keys(limits), Object.keys(shippedLimits));
    for (const [name, limit] of Object.entries(limits)) {
      assert.equal(limit.limit, OUT_OF_REACH, `${resolved.operation.id}: ${name} out of reach`);
      assert.deepEqual({ ...limit, limit: 0 }, { ...shippedLimits[name], limit: 0 });
      lifted++;
    }
  }
  assert.ok(lifted > 0, "the example's limits are lifted");
});

Deno.test("the bench's other policy files load, their per_tpp limit out of reach", async () => {
  const env = { UPSTREAM_URL: "http://127.0.0.1:9", METRICS_TOKEN: "a-long-enough-metrics-token" };
  for (
    const made of [
      defaultPolicyFile,
      featuresPolicyFile,
      writeFloorPolicyFile,
      shadowPolicyFile,
    ]
  ) {
    const policy = await parse(await made(), env);
    const read = policy.operations.find((r) => r.operation.id === "getBalances")!;
    const limits = (read.options.rate_limit as { limits: Limits }).limits;
    assert.equal(limits.per_tpp.limit, OUT_OF_REACH, made.name);
  }
  await parse(await passthroughPolicyFile(), env);
});

Deno.test("the signed rows run on the memory store their names say", async () => {
  // Unnamed, main.ts would open a SQLite file: the rows would measure another store.
  const env = { UPSTREAM_URL: "http://127.0.0.1:9", METRICS_TOKEN: "a-long-enough-metrics-token" };
  const file = await signedPolicyFile(await signedPostFixture());
  setDefaultStoreKind("sqlite"); // as main.ts serves
  try {
    assert.equal((await parse(file, env)).store.kind, "memory");
  } finally {
    setDefaultStoreKind("memory");
  }
});
