/**
 * A signature value checked with the signer's key, for both request-signature schemes: RSA keys
 * of up to 4096 bits on the event loop's thread (rsa.ts, about a seventh of WebCrypto's CPU for a
 * 2048-bit key), ECDSA and larger RSA keys through WebCrypto. The key is the trust store's import
 * for the algorithm (extractable: its public numbers are read once per key).
 */
import { type RsaKey, rsaKey, type RsaScheme, verifyRsa } from "./rsa.ts";

/** The JWS algorithms verified on the event loop, by their RSA scheme. */
const RSA_SCHEMES: Record<string, RsaScheme & { key: string; keyHash: string }> = {
  RS256: { padding: "pkcs1", hash: "sha256", key: "RSASSA-PKCS1-v1_5", keyHash: "SHA-256" },
  RS384: { padding: "pkcs1", hash: "sha384", key: "RSASSA-PKCS1-v1_5", keyHash: "SHA-384" },
  RS512: { padding: "pkcs1", hash: "sha512", key: "RSASSA-PKCS1-v1_5", keyHash: "SHA-512" },
  PS256: { padding: "pss", hash: "sha256", key: "RSA-PSS", keyHash: "SHA-256" },
  PS384: { padding: "pss", hash: "sha384", key: "RSA-PSS", keyHash: "SHA-384" },
  PS512: { padding: "pss", hash: "sha512", key: "RSA-PSS", keyHash: "SHA-512" },
};

/** WebCrypto's parameters of each JWS algorithm (RFC 7518: a PSS salt as long as the hash). */
const WEB_CRYPTO: Record<string, AlgorithmIdentifier | RsaPssParams | EcdsaParams> = {
  RS256: "RSASSA-PKCS1-v1_5",
  RS384: "RSASSA-PKCS1-v1_5",
  RS512: "RSASSA-PKCS1-v1_5",
  PS256: { name: "RSA-PSS", saltLength: 32 },
  PS384: { name: "RSA-PSS", saltLength: 48 },
  PS512: { name: "RSA-PSS", saltLength: 64 },
  ES256: { name: "ECDSA", hash: "SHA-256" },
  ES384: { name: "ECDSA", hash: "SHA-384" },
  ES512: { name: "ECDSA", hash: "SHA-512" },
};

/** The public numbers of each RSA key met, read once per key. */
const numbers = new WeakMap<CryptoKey, Promise<RsaKey | undefined>>();

function numbersOf(key: CryptoKey): Promise<RsaKey | undefined> {
  let found = numbers.get(key);
  if (!found) {
    found = key.type === "public" && key.extractable && key.algorithm.name.startsWith("RS")
      ? crypto.subtle.exportKey("jwk", key).then(
        ({ n, e }) => n && e ? rsaKey(n, e) : undefined,
        () => undefined,
      )
      : Promise.resolve(undefined);
    numbers.set(key, found);
  }
  return found;
}

/**
 * Whether `signature` is a signature of `data` under the JWS algorithm `alg` (`RS256`, `PS512`,
 * `ES256`, ...) with `key`, imported for that algorithm. A value the key cannot check (an
 * unknown algorithm, a key of another kind) does not verify.
 */
export async function verifyValue(
  alg: string,
  key: CryptoKey,
  signature: Uint8Array<ArrayBuffer>,
  data: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  const scheme = RSA_SCHEMES[alg];
  const { name, hash } = key.algorithm as RsaHashedKeyAlgorithm;
  // A key imported for another algorithm checks nothing, as WebCrypto would refuse it.
  if (scheme && (name !== scheme.key || hash.name !== scheme.keyHash)) return false;
  const rsa = scheme && await numbersOf(key);
  if (rsa) return verifyRsa(rsa, scheme, signature, data);
  const algorithm = WEB_CRYPTO[alg];
  if (!algorithm) return false;
  try {
    return await crypto.subtle.verify(algorithm, key, signature, data);
  } catch {
    return false;
  }
}
