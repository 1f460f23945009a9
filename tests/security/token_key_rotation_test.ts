/**
 * Attacks on bearer tokens across a key rotation: the bank removes a (leaked) signing key from the
 * JWKS file and reloads the policy (SIGHUP); tokens signed with that key must stop working.
 */
import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { serveTestGateway } from "../support/served_gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { passthroughPolicy, policyYaml } from "../support/policies.ts";

const ISSUER = "https://auth.bank.example";
const leaked = await generateKeyPair("ES256");
const fresh = await generateKeyPair("ES256");
const jwk = async (key: CryptoKey, kid: string): Promise<JWK> => ({
  ...await exportJWK(key),
  kid,
  alg: "ES256",
  use: "sig",
});
const LEAKED = await jwk(leaked.publicKey, "2026-10");
const FRESH = await jwk(fresh.publicKey, "2026-11");

function token(kid: string, key: CryptoKey): Promise<string> {
  return new SignJWT({ iss: ISSUER, client_id: "PSDDE-BAFIN-123456", scope: "accounts" })
    .setProtectedHeader({ alg: "ES256", kid })
    .setExpirationTime("5m")
    .sign(key);
}

async function gatewayWithJwksFile(jwksFile: string, upstream: string) {
  const served = await serveTestGateway({
    policy: policyYaml(passthroughPolicy({ upstream: { url: upstream } }, {
      defaults: {
        bearer_token: { mode: "enforce", jwks_file: jwksFile, issuer: ISSUER, required: true },
      },
    })),
  });
  return {
    ...served,
    async status(bearer: string) {
      const response = await fetch(`${served.url}/v1/accounts`, {
        headers: { "x-request-id": crypto.randomUUID(), authorization: `Bearer ${bearer}` },
      });
      await response.body?.cancel();
      return response.status;
    },
  };
}

Deno.test("bearer_token refuses a token of a key removed from the JWKS file once the policy is reloaded", async () => {
  await using upstream = startUpstream();
  const jwksFile = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(jwksFile, JSON.stringify({ keys: [LEAKED] }));
  await using gateway = await gatewayWithJwksFile(jwksFile, upstream.url);
  const stolen = await token("2026-10", leaked.privateKey);
  assert.equal(await gateway.status(stolen), 200);
  assert.equal(upstream.received.length, 1);

  await Deno.writeTextFile(jwksFile, JSON.stringify({ keys: [FRESH] }));
  assert.equal(await gateway.server.reload(), true);
  assert.equal(await gateway.status(stolen), 401, "the leaked key's token");
  assert.equal(upstream.received.length, 1, "it did not reach the core");
  assert.equal(await gateway.status(await token("2026-11", fresh.privateKey)), 200);
  assert.equal(upstream.received.length, 2);
  await Deno.remove(jwksFile);
});

Deno.test("bearer_token takes a repaired JWKS file at the next reload", async () => {
  await using upstream = startUpstream();
  const jwksFile = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(jwksFile, JSON.stringify({ keys: [LEAKED] }));
  await using gateway = await gatewayWithJwksFile(jwksFile, upstream.url);
  // A half-written rotation is refused, and the keys in force stay.
  await Deno.writeTextFile(jwksFile, '{"keys": [');
  assert.equal(await gateway.server.reload(), false);
  assert.equal(await gateway.status(await token("2026-10", leaked.privateKey)), 200);
  await Deno.writeTextFile(jwksFile, JSON.stringify({ keys: [FRESH] }));
  assert.equal(await gateway.server.reload(), true, "the repaired file is read again");
  assert.equal(await gateway.status(await token("2026-10", leaked.privateKey)), 401);
  assert.equal(await gateway.status(await token("2026-11", fresh.privateKey)), 200);
  await Deno.remove(jwksFile);
});
