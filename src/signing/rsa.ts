/**
 * RSA signature verification on the event loop's thread: RSASSA-PKCS1-v1_5 and RSASSA-PSS with
 * SHA-256, -384 or -512 (RFC 8017, 8.2.2 and 8.1.2 with 9.1.2), the salt as long as the hash (JWS
 * PS256 to PS512, RFC 7518 3.5; draft-cavage hs2019). This runtime's WebCrypto took about 340 us
 * of CPU for one 2048-bit verification (its RSA is Rust's `rsa` crate, run on a worker thread),
 * node:crypto about 190; the public operation over BigInt takes about 25 (a scratch loop:
 * micro-rsa-dsa-dh's verify took 74, stringifying the modulus and converting through hex per
 * call). Every input here is public, so nothing needs constant time.
 *
 * PKCS#1 v1.5 is checked by encoding and comparing (8.2.2 step 3), never by parsing the padding,
 * which is what lets forged DigestInfo encodings through. Keys larger than {@link MAX_BITS} or with
 * an exponent above 2^32 are left to WebCrypto (value.ts): the cost of this operation grows with
 * both, and it runs where every request waits for it; so are keys below {@link MIN_BITS}.
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";

/** The largest modulus verified here; larger ones go to WebCrypto's worker threads. */
export const MAX_BITS = 4096;
/** The smallest: WebCrypto decides on smaller keys (it refuses what it cannot check). */
export const MIN_BITS = 1024;

/** An RSA public key as the operation needs it. */
export interface RsaKey {
  n: bigint;
  e: bigint;
  /** The modulus's length in bits and in bytes (a signature's length). */
  bits: number;
  bytes: number;
}

/** How a signature was made: the padding and the hash. */
export interface RsaScheme {
  padding: "pkcs1" | "pss";
  hash: "sha256" | "sha384" | "sha512";
}

/** The hashes, with their length and the DER prefix of a DigestInfo (RFC 8017, 9.2 note 1). */
const HASHES = {
  sha256: { length: 32, digestInfo: "3031300d060960864801650304020105000420" },
  sha384: { length: 48, digestInfo: "3041300d060960864801650304020205000430" },
  sha512: { length: 64, digestInfo: "3051300d060960864801650304020305000440" },
} as const;

/** The key of a JWK's `n` and `e`, or `undefined` outside what is verified here. */
export function rsaKey(n: string, e: string): RsaKey | undefined {
  const modulus = integer(Buffer.from(n, "base64url"));
  const exponent = integer(Buffer.from(e, "base64url"));
  const bits = modulus.toString(2).length;
  if (
    bits < MIN_BITS || bits > MAX_BITS || exponent < 3n || exponent >= 1n << 32n ||
    exponent % 2n === 0n
  ) {
    return undefined;
  }
  return { n: modulus, e: exponent, bits, bytes: Math.ceil(bits / 8) };
}

/** Whether `signature` is `key`'s signature of `data` under `scheme`. */
export function verifyRsa(
  key: RsaKey,
  scheme: RsaScheme,
  signature: Uint8Array,
  data: Uint8Array,
): boolean {
  if (signature.length !== key.bytes) return false;
  const s = integer(signature);
  if (s >= key.n) return false;
  const m = power(s, key.e, key.n);
  const digest = createHash(scheme.hash).update(data).digest();
  return scheme.padding === "pkcs1"
    ? m.toString(16).padStart(2 * key.bytes, "0") === pkcs1Encoding(key.bytes, scheme.hash, digest)
    : pssVerify(m, key.bits - 1, scheme.hash, digest);
}

/** A big-endian unsigned integer. */
function integer(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  return BigInt("0x" + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("hex"));
}

/** `base` to the `exponent` modulo `modulus`, left to right over the exponent's bits. */
function power(base: bigint, exponent: bigint, modulus: bigint): bigint {
  const bits = exponent.toString(2);
  let result = base;
  for (let i = 1; i < bits.length; i++) {
    result = result * result % modulus;
    if (bits[i] === "1") result = result * base % modulus;
  }
  return result;
}

/** EMSA-PKCS1-v1_5's encoding of a digest in `length` bytes, as hex (RFC 8017, 9.2). */
function pkcs1Encoding(length: number, hash: RsaScheme["hash"], digest: Buffer): string {
  const { digestInfo } = HASHES[hash];
  // At least 42 bytes of padding: 128 bytes (MIN_BITS) less 3, the DigestInfo and SHA-512's 64.
  const padding = length - 3 - digestInfo.length / 2 - digest.length;
  return "0001" + "ff".repeat(padding) + "00" + digestInfo + digest.toString("hex");
}

/**
 * EMSA-PSS-VERIFY (RFC 8017, 9.1.2) of the message representative `m`, its salt as long as the
 * hash.
 */
function pssVerify(m: bigint, emBits: number, hash: RsaScheme["hash"], digest: Buffer): boolean {
  const emLength = Math.ceil(emBits / 8);
  const hex = m.toString(16);
  if (hex.length > 2 * emLength) return false; // I2OSP: the integer does not fit emLen bytes
  const em = Buffer.from(hex.padStart(2 * emLength, "0"), "hex");
  const { length } = HASHES[hash];
  const saltLength = length;
  if (emLength < length + saltLength + 2) return false;
  if (em[emLength - 1] !== 0xbc) return false;
  const dbLength = emLength - length - 1;
  const h = em.subarray(dbLength, dbLength + length);
  const unused = 8 * emLength - emBits;
  if (em[0] >> (8 - unused) !== 0) return false;
  const db = mgf1(hash, h, dbLength);
  for (let i = 0; i < dbLength; i++) db[i] ^= em[i];
  db[0] &= 0xff >> unused;
  const separator = dbLength - saltLength - 1;
  for (let i = 0; i < separator; i++) if (db[i] !== 0) return false;
  if (db[separator] !== 0x01) return false;
  const expected = createHash(hash)
    .update(new Uint8Array(8))
    .update(digest)
    .update(db.subarray(dbLength - saltLength))
    .digest();
  return expected.equals(h);
}

/** MGF1 (RFC 8017, B.2.1): `length` bytes of mask from `seed`. */
function mgf1(hash: RsaScheme["hash"], seed: Uint8Array, length: number): Buffer {
  const blocks: Buffer[] = [];
  const counter = Buffer.alloc(4);
  for (let i = 0, made = 0; made < length; i++, made += HASHES[hash].length) {
    counter.writeUInt32BE(i);
    blocks.push(createHash(hash).update(seed).update(counter).digest());
  }
  return Buffer.concat(blocks).subarray(0, length);
}
