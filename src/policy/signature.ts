/**
 * Signed policies: when the deployment names a key (GATEWAY_POLICY_KEY: a JWK or PEM file), a
 * policy file loads only with a detached JWS (RFC 7515 Appendix F: `<header>..<signature>`) over
 * its exact bytes that verifies with that key, read from `<file>.sig` or the file
 * GATEWAY_POLICY_SIGNATURE names. The key decides the algorithm (EdDSA for Ed25519, ES256 or
 * ES384 for P-256 or P-384, PS256 for RSA, or the JWK's `alg`), never the signature's header. At
 * start an unsigned or badly signed file stops the gateway; on reload it is refused and the
 * running policy keeps serving (src/http/live_policy.ts). `deno task policy:sign` makes the
 * signature (src/cli/policy_sign.ts).
 */
import type { JWK } from "jose";
import { createPrivateKey, createPublicKey } from "node:crypto";
import { PolicyError } from "./load.ts";
import { lazy } from "../lib/lazy.ts";

/** The environment variable that names the verification key. */
export const KEY_VARIABLE = "GATEWAY_POLICY_KEY";
/** The environment variable that names the signature file (default: `<policy file>.sig`). */
export const SIGNATURE_VARIABLE = "GATEWAY_POLICY_SIGNATURE";

/** jose's parts, loaded only where a deployment names a key (most never do). */
const jose = lazy(async () => ({
  ...await import("jose/jws/compact/verify"),
  ...await import("jose/key/import"),
}));

/** The JWS algorithm a key signs with. */
export function keyAlgorithm(jwk: JWK): string {
  if (jwk.alg) return jwk.alg;
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519") return "EdDSA";
  if (jwk.kty === "EC" && jwk.crv === "P-256") return "ES256";
  if (jwk.kty === "EC" && jwk.crv === "P-384") return "ES384";
  if (jwk.kty === "RSA") return "PS256";
  throw new Error(`a ${jwk.kty}${jwk.crv ? ` ${jwk.crv}` : ""} key cannot sign a policy`);
}

/** A key file as a JWK: JSON (a JWK) or PEM (public SPKI, or a private key when `private`). */
export function keyFileJwk(text: string, options: { private?: boolean } = {}): JWK {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) return JSON.parse(trimmed) as JWK;
  const key = options.private ? createPrivateKey(trimmed) : createPublicKey(trimmed);
  return key.export({ format: "jwk" }) as JWK;
}

/** A key file read for verification: its JWK without any private part. */
async function verificationKey(file: string): Promise<{ jwk: JWK; alg: string }> {
  const jwk = keyFileJwk(await Deno.readTextFile(file));
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = jwk;
  return { jwk: pub, alg: keyAlgorithm(jwk) };
}

/** Options of {@link verifyPolicySignature}; both default to the environment. */
export interface SignatureOptions {
  /** The verification key file (unset: policies load unsigned). */
  key?: string;
  /** The signature file (default: `<file>.sig`). */
  signature?: string;
}

/** The options the environment gives. */
function fromEnv(): SignatureOptions {
  try {
    return {
      key: Deno.env.get(KEY_VARIABLE) || undefined,
      signature: Deno.env.get(SIGNATURE_VARIABLE) || undefined,
    };
  } catch {
    return {}; // no --allow-env: no key named
  }
}

/**
 * Throws {@link PolicyError} unless the policy file's `bytes` carry a signature that verifies
 * with the deployment's key; does nothing when no key is named.
 */
export async function verifyPolicySignature(
  file: string,
  bytes: Uint8Array,
  options: SignatureOptions = fromEnv(),
): Promise<void> {
  if (!options.key) return;
  const where = options.signature ?? `${file}.sig`;
  let key: { jwk: JWK; alg: string };
  try {
    key = await verificationKey(options.key);
  } catch (error) {
    throw new PolicyError(file, [
      `${KEY_VARIABLE}: cannot read the key "${options.key}": ${(error as Error).message}`,
    ]);
  }
  let signature: string;
  try {
    signature = (await Deno.readTextFile(where)).trim();
  } catch (error) {
    throw new PolicyError(file, [
      `the policy must be signed (${KEY_VARIABLE} is set) and its signature "${where}" cannot be read: ${
        (error as Error).message
      }`,
    ]);
  }
  const parts = signature.split(".");
  if (parts.length !== 3 || parts[1] !== "") {
    throw new PolicyError(file, [
      `the signature "${where}" must be a detached JWS, <header>..<signature>`,
    ]);
  }
  const { compactVerify, importJWK } = await jose();
  try {
    const payload = new Uint8Array(bytes).toBase64({ alphabet: "base64url", omitPadding: true });
    await compactVerify(
      `${parts[0]}.${payload}.${parts[2]}`,
      await importJWK(key.jwk, key.alg),
      { algorithms: [key.alg] },
    );
  } catch (error) {
    throw new PolicyError(file, [
      `the signature "${where}" does not verify with the key "${options.key}" over this file: ${
        (error as Error).message
      }`,
    ]);
  }
}
