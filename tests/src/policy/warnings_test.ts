import assert from "node:assert/strict";
import { PIPELINE } from "../../../middleware/mod.ts";
import { parsePolicy } from "../../../src/policy/load.ts";
import { policyWarnings } from "../../../src/policy/warnings.ts";
import { createCa } from "../../support/pki.ts";
import { buildPolicy, type PolicyInput, policyYaml } from "../../support/policies.ts";

const JWKS = "https://auth.bank.example/jwks.json";

const REDIS: PolicyInput = { store: { kind: "redis", url: "redis://127.0.0.1:6379" } };

/** The warnings of a policy: `upstream` and a Redis store (or `store`), then the given parts. */
function warnings(policy: PolicyInput, store = REDIS) {
  const text = policyYaml(
    buildPolicy({ upstream: { url: "http://core.internal" } }, store, policy),
  );
  return policyWarnings(parsePolicy("policy.yaml", text, PIPELINE));
}

Deno.test("policyWarnings() is silent about a policy without contradictions", () => {
  assert.deepEqual(
    warnings({
      trust: { terminators: ["10.0.0.0/24"] },
      defaults: {
        tpp_certificate: { required: true },
        bearer_token: { mode: "enforce", jwks_url: JWKS, require_binding: true },
      },
      groups: { ais: { bearer_token: { scopes: ["accounts"] } } },
    }),
    [],
  );
});

Deno.test("policyWarnings() warns where certificates and tokens are both required without binding", () => {
  const found = warnings({
    trust: { terminators: ["10.0.0.0/24"] },
    defaults: {
      tpp_certificate: { required: true },
      bearer_token: { mode: "enforce", jwks_url: JWKS },
    },
    groups: { products: { bearer_token: { mode: "off" } } },
  });
  assert.equal(found.length, 1);
  assert.match(found[0], /^bearer_token for .*: certificates and tokens are both required/);
  assert.ok(!found[0].includes("getProducts"), "not where tokens are off");
});

Deno.test("policyWarnings() warns about scopes that no required token backs", () => {
  const found = warnings({
    defaults: { bearer_token: { mode: "enforce", jwks_url: JWKS } },
    groups: { ais: { bearer_token: { scopes: ["accounts"], required: false } } },
  });
  assert.equal(found.length, 1);
  assert.match(
    found[0],
    /^bearer_token for getAccountList, readAccountDetails, .*: scopes are set with required: false/,
  );
});

Deno.test("policyWarnings() warns about scopes set where token verification is off", () => {
  const found = warnings({
    operations: { getAccountList: { bearer_token: { scopes: ["accounts"] } } },
  });
  assert.deepEqual(found, [
    "bearer_token for getAccountList: scopes are set but the check is off, so nothing checks them",
  ]);
});

Deno.test("policyWarnings() warns about certificates required without terminators", () => {
  const required: PolicyInput = { defaults: { tpp_certificate: { required: true } } };
  const unset = warnings(required);
  assert.equal(unset.length, 1);
  assert.match(unset[0], /^tpp_certificate requires a certificate for every operation/);
  assert.match(unset[0], /trust\.terminators is not set: only loopback peers/);
  const empty = warnings({ trust: { terminators: [] }, ...required });
  assert.match(empty[0], /trust\.terminators is empty: no peer may send the certificate header/);
  // Required nowhere, or the check off: nothing to say.
  assert.deepEqual(warnings({ defaults: { tpp_certificate: { required: false } } }), []);
  assert.deepEqual(
    warnings({ defaults: { tpp_certificate: { required: true, mode: "off" } } }),
    [],
  );
});

Deno.test("policyWarnings() says that a memory store holds per instance", () => {
  const found = warnings({}, {});
  assert.equal(found.length, 1);
  assert.match(
    found[0],
    /^store\.kind is memory: .* hold per instance, so under deno serve --parallel/,
  );
  assert.match(
    found[0],
    /; use sqlite there on one machine, kv on Deno Deploy, or redis or upstash$/,
  );
});

Deno.test("policyWarnings() of the shipped policies: the sandbox's memory store, and nothing in production", async () => {
  const ca = await createCa();
  const bundle = await Deno.makeTempFile({ suffix: ".pem" });
  await Deno.writeTextFile(bundle, ca.pem);
  const env: Record<string, string> = {
    UPSTREAM_URL: "http://core.internal",
    STORE_URL: "redis://127.0.0.1:6379",
    QTSP_CA_BUNDLE: bundle,
    OAUTH_JWKS_URL: JWKS,
    OAUTH_ISSUER: "https://auth.bank.example",
    METRICS_TOKEN: "a-metrics-token-of-enough-length",
    OAUTH_INTROSPECTION_URL: "https://auth.bank.example/introspect",
    OAUTH_CLIENT_SECRET: "a-client-secret",
    TPP_REGISTER_URL: "https://register.bank.example/tpp_register.json",
  };
  const load = async (file: string) =>
    policyWarnings(
      parsePolicy(file, await Deno.readTextFile(file), { ...PIPELINE, env: (n) => env[n] }),
    );
  try {
    const sandbox = await load("config/policy.yaml");
    assert.equal(sandbox.length, 1);
    assert.match(sandbox[0], /^store\.kind is memory/);
    assert.deepEqual(await load("config/production.example.yaml"), []);
  } finally {
    await Deno.remove(bundle);
  }
});
