/**
 * Identified TPPs for tests of shared state: bearer tokens (JWT) of a test authorisation server
 * whose JWKS is a temporary file, and the `bearer_token` options that accept them. A token's
 * `client_id` is the TPP id when no certificate identified the TPP; `sub` is its PSU.
 */
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import type { LevelInput } from "./policies.ts";

const ISSUER = "https://auth.bank.example";

/** A test authorisation server. */
export interface TokenIssuer {
  /** Options of `bearer_token` that verify this issuer's tokens (mode enforce, not required). */
  options: NonNullable<LevelInput["bearer_token"]>;
  /** A token for `clientId` (valid five minutes), with `claims` over the defaults. */
  token(clientId: string, claims?: Record<string, unknown>): Promise<string>;
  /** `Authorization: Bearer <token>` for `clientId` (signed once per client id and claims). */
  headers(clientId: string, claims?: Record<string, unknown>): Promise<Record<string, string>>;
}

/** Makes a key, writes its JWKS to a temporary file and issues tokens signed with it. */
export async function tokenIssuer(): Promise<TokenIssuer> {
  const keys = await generateKeyPair("RS256");
  const jwk = { ...await exportJWK(keys.publicKey), kid: "test", alg: "RS256", use: "sig" };
  const file = await Deno.makeTempFile({ prefix: "jwks-", suffix: ".json" });
  await Deno.writeTextFile(file, JSON.stringify({ keys: [jwk] }));
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(file);
    } catch {
      // Already gone.
    }
  });
  const token = (clientId: string, claims: Record<string, unknown> = {}) =>
    new SignJWT({
      iss: ISSUER,
      client_id: clientId,
      exp: Math.floor(Date.now() / 1000) + 300,
      ...claims,
    }).setProtectedHeader({ alg: "RS256", kid: "test" }).sign(keys.privateKey);
  const signed = new Map<string, Promise<string>>();
  return {
    options: { mode: "enforce", jwks_file: file, issuer: ISSUER, algorithms: ["RS256"] },
    token,
    async headers(clientId, claims) {
      const key = JSON.stringify([clientId, claims]);
      let value = signed.get(key);
      if (!value) signed.set(key, value = token(clientId, claims));
      return { authorization: `Bearer ${await value}` };
    },
  };
}
