import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import {
  MAX_BITS,
  MIN_BITS,
  type RsaKey,
  rsaKey,
  type RsaScheme,
  verifyRsa,
} from "../../../src/signing/rsa.ts";

// Every answer of verifyRsa is compared with WebCrypto's over the same key, data and signature.

const SCHEMES: [string, RsaScheme, RsaHashedImportParams["name"], string][] = [
  ["RS256", { padding: "pkcs1", hash: "sha256" }, "RSASSA-PKCS1-v1_5", "SHA-256"],
  ["RS384", { padding: "pkcs1", hash: "sha384" }, "RSASSA-PKCS1-v1_5", "SHA-384"],
  ["RS512", { padding: "pkcs1", hash: "sha512" }, "RSASSA-PKCS1-v1_5", "SHA-512"],
  ["PS256", { padding: "pss", hash: "sha256" }, "RSA-PSS", "SHA-256"],
  ["PS384", { padding: "pss", hash: "sha384" }, "RSA-PSS", "SHA-384"],
  ["PS512", { padding: "pss", hash: "sha512" }, "RSA-PSS", "SHA-512"],
];

interface Pair {
  key: RsaKey;
  d: bigint;
  /** WebCrypto's key pair, per scheme name. */
  web: Map<string, CryptoKeyPair>;
}

const integer = (bytes: Uint8Array) => BigInt("0x" + (Buffer.from(bytes).toString("hex") || "0"));
const bytesOf = (value: bigint, length: number) =>
  new Uint8Array(Buffer.from(value.toString(16).padStart(2 * length, "0"), "hex"));
function power(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  for (base %= modulus; exponent > 0n; exponent >>= 1n, base = base * base % modulus) {
    if (exponent & 1n) result = result * base % modulus;
  }
  return result;
}

/** A key pair of `bits`, imported into WebCrypto for every scheme. */
async function pair(bits: number): Promise<Pair> {
  const generated = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: bits,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
  const jwk = await crypto.subtle.exportKey("jwk", generated.privateKey);
  const web = new Map<string, CryptoKeyPair>();
  for (const [alg, , name, hash] of SCHEMES) {
    const privateKey = await crypto.subtle.importKey(
      "jwk",
      { ...jwk, alg: undefined },
      {
        name,
        hash,
      },
      true,
      ["sign"],
    );
    const { d: _, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, key_ops: _ops, ...publicJwk } = jwk;
    const publicKey = await crypto.subtle.importKey(
      "jwk",
      { ...publicJwk, alg: undefined },
      {
        name,
        hash,
      },
      true,
      ["verify"],
    );
    web.set(alg, { privateKey, publicKey });
  }
  const key = rsaKey(jwk.n!, jwk.e!);
  assert.ok(key);
  return { key, d: integer(Buffer.from(jwk.d!, "base64url")), web };
}

function webParams(alg: string, hashLength: number): AlgorithmIdentifier | RsaPssParams {
  return alg.startsWith("PS") ? { name: "RSA-PSS", saltLength: hashLength } : "RSASSA-PKCS1-v1_5";
}
const HASH_LENGTH: Record<string, number> = { sha256: 32, sha384: 48, sha512: 64 };

async function both(
  { key, web }: Pair,
  [alg, scheme]: (typeof SCHEMES)[number],
  signature: Uint8Array<ArrayBuffer>,
  data: Uint8Array<ArrayBuffer>,
): Promise<[boolean, boolean]> {
  const ours = verifyRsa(key, scheme, signature, data);
  let theirs: boolean;
  try {
    theirs = await crypto.subtle.verify(
      webParams(alg, HASH_LENGTH[scheme.hash]),
      web.get(alg)!.publicKey,
      signature,
      data,
    );
  } catch {
    theirs = false;
  }
  return [ours, theirs];
}

const pairs = new Map<number, Promise<Pair>>();
const pairOf = (bits: number) => {
  if (!pairs.has(bits)) pairs.set(bits, pair(bits));
  return pairs.get(bits)!;
};

Deno.test("verifyRsa() accepts what WebCrypto signs, for each scheme and modulus size", async () => {
  // 2049 bits: PSS's encoded message is a byte shorter than the signature.
  for (const bits of [1024, 2048, 2049, 2056, 3072, 4096]) {
    const keys = await pairOf(bits);
    assert.equal(keys.key.bits, bits);
    for (const scheme of SCHEMES) {
      const [alg, , , hash] = scheme;
      // 1024 bits cannot hold a PSS encoding with SHA-512 and its salt (a test of its own below).
      if (bits === 1024 && alg === "PS512") continue;
      for (const length of [0, 1, 200, 5000]) {
        const data = crypto.getRandomValues(new Uint8Array(length));
        const params = webParams(alg, Number(hash.slice(4)) / 8);
        const signature = new Uint8Array(
          await crypto.subtle.sign(params, keys.web.get(alg)!.privateKey, data),
        );
        assert.deepEqual(await both(keys, scheme, signature, data), [true, true], `${alg} ${bits}`);
        const other = data.length ? data.map((b, i) => i === 0 ? b ^ 1 : b) : new Uint8Array(1);
        assert.deepEqual(await both(keys, scheme, signature, other), [false, false]);
      }
    }
  }
});

Deno.test("verifyRsa() refuses every altered signature WebCrypto refuses", async () => {
  const keys = await pairOf(2048);
  const data = new TextEncoder().encode("x-request-id: 99391c7e-ad88-49ec-a2ad-99ddcb1f7721");
  for (const scheme of SCHEMES) {
    const [alg, { hash }] = scheme;
    const signature = new Uint8Array(
      await crypto.subtle.sign(
        webParams(alg, HASH_LENGTH[hash]),
        keys.web.get(alg)!.privateKey,
        data,
      ),
    );
    for (const at of [0, 1, 2, 17, 128, 254, 255]) {
      for (const bit of [0, 7]) {
        const altered = signature.slice();
        altered[at] ^= 1 << bit;
        assert.deepEqual(await both(keys, scheme, altered, data), [false, false], `${alg} ${at}`);
      }
    }
    const n = bytesOf(keys.key.n, 256);
    const cases: [string, Uint8Array<ArrayBuffer>][] = [
      ["one byte short", signature.slice(1)],
      ["one byte long", new Uint8Array([0, ...signature])],
      ["zero", new Uint8Array(256)],
      ["one", bytesOf(1n, 256)],
      ["the modulus", n],
      ["empty", new Uint8Array(0)],
    ];
    for (const [label, value] of cases) {
      assert.deepEqual(await both(keys, scheme, value, data), [false, false], `${alg} ${label}`);
    }
    // The signature plus the modulus, when it fits the length: RFC 8017 (8.2.2 and 8.1.2, step
    // 2b) has it invalid. This runtime's WebCrypto takes it for PSS; verifyRsa never does.
    const plus = keys.key.n + integer(signature);
    if (plus < 1n << 2048n) {
      assert.equal(verifyRsa(keys.key, scheme[1], bytesOf(plus, 256), data), false, alg);
    }
  }
});

/** The signature of an encoded message `em` (k bytes) made with the private exponent. */
function rawSign({ key, d }: Pair, em: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytesOf(power(integer(em), d, key.n), key.bytes);
}

Deno.test("verifyRsa() compares PKCS #1 v1.5 encodings whole: no forged DigestInfo passes", async () => {
  const keys = await pairOf(2048);
  const data = new TextEncoder().encode(
    "digest: SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
  );
  const digest = createHash("sha256").update(data).digest("hex");
  const info = "3031300d060960864801650304020105000420";
  const pad = (body: string, type = "01", fill = "ff") =>
    "00" + type + fill.repeat(256 - 3 - body.length / 2) + "00" + body;
  const scheme = SCHEMES[0];
  const honest = rawSign(keys, Buffer.from(pad(info + digest), "hex"));
  assert.deepEqual(await both(keys, scheme, honest, data), [true, true]);
  const forged: [string, string][] = [
    ["the DigestInfo without its NULL", pad("302f300b0609608648016503040201" + "0420" + digest)],
    ["garbage after the digest", pad(info + digest + "5a".repeat(20))],
    ["block type 2", pad(info + digest, "02", "ab")],
    ["padding of zeros", pad(info + digest, "01", "00")],
    ["a SHA-1 DigestInfo", pad("3021300906052b0e03021a05000414" + digest.slice(0, 40))],
    [
      "short padding and trailing garbage (the e=3 forgery's form)",
      ("0001" + "ff".repeat(8) + "00" + info + digest).padEnd(512, "5a"),
    ],
  ];
  for (const [label, hex] of forged) {
    assert.equal(hex.length, 512, label);
    const signature = rawSign(keys, Buffer.from(hex, "hex"));
    assert.deepEqual(await both(keys, scheme, signature, data), [false, false], label);
  }
});

/** EMSA-PSS-ENCODE (RFC 8017, 9.1.1) of `data` in `emBits`, with `salt`, as hex; `hash` sha*. */
function pssEncoding(data: Uint8Array, emBits: number, hash: string, salt: Uint8Array): Buffer {
  const digest = (...parts: Uint8Array[]) => {
    const h = createHash(hash);
    for (const part of parts) h.update(part);
    return h.digest();
  };
  const hLength = HASH_LENGTH[hash];
  const emLength = Math.ceil(emBits / 8);
  const h = digest(new Uint8Array(8), digest(data), salt);
  const db = Buffer.concat([
    Buffer.alloc(emLength - salt.length - hLength - 2),
    Buffer.from([1]),
    salt,
  ]);
  const mask: Buffer[] = [];
  for (let i = 0; Buffer.concat(mask).length < db.length; i++) {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(i);
    mask.push(digest(h, counter));
  }
  const masked = db.map((byte, i) => byte ^ Buffer.concat(mask)[i]);
  masked[0] &= 0xff >> (8 * emLength - emBits);
  return Buffer.concat([masked, h, Buffer.from([0xbc])]);
}

Deno.test("verifyRsa() checks every part of a PSS encoding: trailer, top bits, padding, separator, hash", async () => {
  for (const bits of [2048, 2049]) {
    const keys = await pairOf(bits);
    const scheme = SCHEMES[3];
    const data = new TextEncoder().encode("x-request-id: 99391c7e-ad88-49ec-a2ad-99ddcb1f7721");
    const emBits = bits - 1;
    const sign = (em: Uint8Array) =>
      rawSign(keys, new Uint8Array([...new Uint8Array(keys.key.bytes - em.length), ...em]));
    const honest = pssEncoding(data, emBits, "sha256", crypto.getRandomValues(new Uint8Array(32)));
    assert.deepEqual(await both(keys, scheme, sign(honest), data), [true, true], `${bits}`);
    const dbLength = honest.length - 33;
    const altered = (label: string, change: (em: Buffer) => void): [string, Buffer] => {
      const em = Buffer.from(honest);
      change(em);
      return [label, em];
    };
    const cases = [
      altered("the trailer not 0xbc", (em) => em[em.length - 1] = 0xbd),

      // The salt's first byte taken into the zero padding: its separator is then a salt byte.
      altered("a padding byte not zero", (em) => em[0] ^= 0x01),
      altered("the hash changed", (em) => em[dbLength + 5] ^= 0x01),
    ];
    // 2048 bits: emBits 2047 leaves the top bit of the encoding unused, and it must be zero.
    if (emBits % 8 !== 0) cases.push(altered("the unused top bit set", (em) => em[0] |= 0x80));
    // The separator 0x01 turned into 0x00: the unmasked DB keeps its mask's byte there.
    const separator = Buffer.from(honest);
    separator[honest.length - 33 - 32 - 1] ^= 0x01;
    cases.push(["the separator not 0x01", separator]);
    for (const [label, em] of cases) {
      assert.deepEqual(
        await both(keys, scheme, sign(em), data),
        [false, false],
        `${bits} ${label}`,
      );
    }
    // An integer that needs every byte of the signature: no PSS encoding of emBits (2049 bits:
    // the encoded message is one byte shorter than the key).
    if (bits % 8 === 1) {
      const full = new Uint8Array(keys.key.bytes).fill(0x11);
      full[0] = 0x01;
      assert.equal(verifyRsa(keys.key, scheme[1], rawSign(keys, full), data), false);
    }
  }
});

Deno.test("verifyRsa() refuses PS512 on a 1024-bit key, whose encoding cannot hold it", async () => {
  const keys = await pairOf(1024);
  const data = new Uint8Array([1, 2, 3]);
  const em = new Uint8Array(128).fill(0x5a);
  em[0] = 0;
  em[127] = 0xbc;
  assert.equal(verifyRsa(keys.key, SCHEMES[5][1], rawSign(keys, em), data), false);
});

Deno.test("verifyRsa() takes PSS only with a salt as long as the hash, as JWS and hs2019 do", async () => {
  const keys = await pairOf(2048);
  const data = new TextEncoder().encode(
    "(request-target): post /v1/payments/sepa-credit-transfers",
  );
  for (const scheme of SCHEMES.slice(3)) {
    const [alg, { hash }] = scheme;
    for (const saltLength of [0, 20, HASH_LENGTH[hash] + 1]) {
      const signature = new Uint8Array(
        await crypto.subtle.sign(
          { name: "RSA-PSS", saltLength },
          keys.web.get(alg)!.privateKey,
          data,
        ),
      );
      assert.deepEqual(
        await both(keys, scheme, signature, data),
        [false, false],
        `${alg} ${saltLength}`,
      );
    }
  }
});

Deno.test("rsaKey() leaves keys above 4096 bits and unusual exponents to WebCrypto", () => {
  const text = (value: bigint) => {
    const hex = value.toString(16);
    return Buffer.from(hex.padStart(hex.length + hex.length % 2, "0"), "hex").toString("base64url");
  };
  const modulus = (bits: number) => text((1n << BigInt(bits - 1)) + 1n);
  const exponent = text;
  assert.equal(rsaKey(modulus(MAX_BITS), exponent(65537n))?.bits, MAX_BITS);
  assert.equal(rsaKey(modulus(MIN_BITS), exponent(65537n))?.bits, MIN_BITS);
  assert.equal(rsaKey(modulus(MIN_BITS - 1), exponent(65537n)), undefined);
  assert.equal(rsaKey("", exponent(65537n)), undefined);
  assert.equal(rsaKey(modulus(MAX_BITS + 1), exponent(65537n)), undefined);
  assert.equal(rsaKey(modulus(2048), exponent(3n))?.e, 3n);
  assert.equal(rsaKey(modulus(2048), exponent((1n << 32n) + 1n)), undefined);
  assert.equal(rsaKey(modulus(2048), exponent(65536n)), undefined);
  assert.equal(rsaKey(modulus(2048), exponent(1n)), undefined);
});
