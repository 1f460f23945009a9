import assert from "node:assert/strict";
import {
  createLocalJWKSet,
  errors,
  exportJWK,
  generateKeyPair,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  SignJWT,
} from "jose";
import { tokenVerifier } from "../../../src/tokens/verified.ts";

/** verifyToken(token, keys, options): the verifier of keys and options, at options' date. */
function verifyToken(
  token: string,
  keys: JWTVerifyGetKey,
  { currentDate, ...rest }: JWTVerifyOptions & { currentDate: Date },
) {
  return tokenVerifier(keys, rest)(token, currentDate.getTime());
}

/** Counts the signature checks WebCrypto makes while `run` runs. */
async function signatureChecks(run: () => Promise<unknown>): Promise<number> {
  const subtle = crypto.subtle;
  const original = subtle.verify;
  let count = 0;
  subtle.verify = ((...args: Parameters<typeof original>) => {
    count++;
    return original.apply(subtle, args);
  }) as typeof original;
  try {
    await run();
  } finally {
    subtle.verify = original;
  }
  return count;
}

async function signer(kid: string) {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const jwk = { ...await exportJWK(publicKey), kid, alg: "RS256", use: "sig" };
  const sign = (exp: number) =>
    new SignJWT({ sub: "tpp-1" }).setProtectedHeader({ alg: "RS256", kid })
      .setIssuer("https://as.bank.example").setExpirationTime(exp).sign(privateKey);
  return { jwk, sign };
}

const NOW = Date.parse("2026-11-29T10:00:00Z");
const options = (now = NOW) => ({
  issuer: "https://as.bank.example",
  algorithms: ["RS256"],
  requiredClaims: ["exp"],
  clockTolerance: 30,
  currentDate: new Date(now),
});

Deno.test("tokenVerifier() checks a token's signature once, and again only when its key changed", async () => {
  const first = await signer("k1");
  const second = await signer("k2");
  let set = createLocalJWKSet({ keys: [first.jwk, second.jwk] });
  const keys: JWTVerifyGetKey = (header, token) => set(header, token);
  const token = await first.sign(NOW / 1000 + 600);

  assert.equal(await signatureChecks(() => verifyToken(token, keys, options())), 1);
  const again = await signatureChecks(async () => {
    const claims = await verifyToken(token, keys, options());
    assert.equal(claims.sub, "tpp-1");
  });
  assert.equal(again, 0, "the same token with the same key is not verified again");

  // The key set was fetched anew (another set of the same keys): the key is looked up again and
  // is another object, so the token is verified again.
  set = createLocalJWKSet({ keys: [first.jwk, second.jwk] });
  assert.equal(await signatureChecks(() => verifyToken(token, keys, options())), 1);

  // The token's key left the set: the kept result no longer counts.
  set = createLocalJWKSet({ keys: [second.jwk] });
  await assert.rejects(verifyToken(token, keys, options()), errors.JWKSNoMatchingKey);
});

Deno.test("tokenVerifier() judges exp at every use, with jose's own error once it passed", async () => {
  const { jwk, sign } = await signer("k1");
  const keys = createLocalJWKSet({ keys: [jwk] });
  const exp = NOW / 1000 + 60;
  const token = await sign(exp);
  await verifyToken(token, keys, options());
  await verifyToken(token, keys, options(NOW + 80_000)); // within the 30 s tolerance
  await assert.rejects(verifyToken(token, keys, options(NOW + 91_000)), errors.JWTExpired);
});

Deno.test("tokenVerifier() keeps tokens apart per verification options: another audience is checked", async () => {
  const { jwk, sign } = await signer("k1");
  const keys = createLocalJWKSet({ keys: [jwk] });
  const token = await sign(NOW / 1000 + 600);
  await verifyToken(token, keys, options());
  await assert.rejects(
    verifyToken(token, keys, { ...options(), audience: "https://gateway.bank.example" }),
    errors.JWTClaimValidationFailed,
  );
});
