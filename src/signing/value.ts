/**
 * A signature value checked with the signer's key, for both request-signature schemes: RSA keys
 * of up to 4096 bits on the event loop's thread (rsa.ts, about a seventh of WebCrypto's CPU for a
 * 2048-bit key), ECDSA and larger RSA keys through WebCrypto. The key is the trust store's import
 * for the algorithm (extractable: its public numbers are read once per key).
 */
import { type RsaKey, rsaKey, type RsaScheme, verifyRsa } from "./rsa.ts";

/**
 * Each JWS algorithm: WebCrypto's parameters (RFC 7518: a PSS salt as long as the hash) and, for
 * RSA, the scheme verified on the event loop with the key import it needs (name and hash).
 */
const ALGORITHMS = new Map<string, {
  web: AlgorithmIdentifier | RsaPssParams | EcdsaParams;
  rsa?: RsaScheme & { key: string; keyHash: string };
}>();
for (const bits of [256, 384, 512] as const) {
  const [hash, keyHash] = [`sha${bits}` as const, `SHA-${bits}`];
  const pkcs1 = "RSASSA-PKCS1-v1_5";
  ALGORITHMS.set(`RS${bits}`, { web: pkcs1, rsa: { padding: "pkcs1", hash, key: pkcs1, keyHash } });
  ALGORITHMS.set(`PS${bits}`, {
    web: { name: "RSA-PSS", saltLength: bits / 8 },
    rsa: { padding: "pss", hash, key: "RSA-PSS", keyHash },
  });
  ALGORITHMS.set(`ES${bits}`, { web: { name: "ECDSA", hash: keyHash } });
}

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
  const algorithm = ALGORITHMS.get(alg);
  if (!algorithm) return false;
  const scheme = algorithm.rsa;
  const { name, hash } = key.algorithm as RsaHashedKeyAlgorithm;
  // A key imported for another algorithm checks nothing, as WebCrypto would refuse it.
  if (scheme && (name !== scheme.key || hash.name !== scheme.keyHash)) return false;
  const rsa = scheme && await numbersOf(key);
  if (rsa) return verifyRsa(rsa, scheme, signature, data);
  try {
    return await crypto.subtle.verify(algorithm.web, key, signature, data);
  } catch {
    return false;
  }
}
