/**
 * Request signers for tests and the bench, written from the reference (not from the gateway's
 * verifiers): detached JWS for `x-jws-signature` and Berlin Group 1.3 draft-cavage HTTP
 * signatures, plus a ready signed-POST fixture and a measurement of one JWS verification.
 */
import process from "node:process";
import { checkDigest, digestOf } from "../../src/signing/digest.ts";
import { JwsVerifier } from "../../src/signing/jws.ts";
import { TrustStore } from "../../src/pki/trust.ts";
import { trustSection } from "../../src/pki/sections.ts";
import { createCa, issue, type Issued, nginxHeader, yamlString } from "./pki.ts";
import { initiationHeaders, singlePayment } from "./requests.ts";

/** A request to sign. Header names in lower case. */
export interface SignInput {
  method: string;
  /** Path and query, for example `/v1/payments/domestic`. */
  target: string;
  headers: Record<string, string>;
  body?: string;
  /**
   * Header values and body are byte strings (one character per byte, as sent on the wire): the
   * Digest and the signed lines take them byte for byte. Default: text, signed as its UTF-8.
   */
  binary?: boolean;
}

/** A string's bytes: byte for byte when `binary` (a byte string), else its UTF-8. */
function bytesFrom(text: string, binary = false): Uint8Array<ArrayBuffer> {
  return binary ? Uint8Array.from(text, (ch) => ch.charCodeAt(0)) : encoder.encode(text);
}

const encoder = new TextEncoder();
const CONDITIONAL = [
  "psu-id",
  "psu-corporate-id",
  "tpp-redirect-uri",
  "tpp-nok-redirect-uri",
  "consent-id",
];

function b64url(bytes: Uint8Array | ArrayBuffer): string {
  return btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function b64(bytes: ArrayBuffer): string {
  return btoa(String.fromCharCode(...new Uint8Array(bytes)));
}

/**
 * The signed lines: `(request-target): post /v1/...`, `name: value`, and for draft-cavage's other
 * pseudo-headers (`(created)`) their value in `pseudo`, joined by "\n". Names are written in lower
 * case (the reference's form) unless `asWritten`; values are looked up case-insensitively.
 */
function lines(
  names: string[],
  input: SignInput,
  headers: Record<string, string>,
  pseudo: Record<string, string> = {},
  asWritten = false,
): string {
  return names.map((written) => {
    const name = written.toLowerCase();
    return name === "(request-target)"
      ? `(request-target): ${input.method.toLowerCase()} ${input.target}`
      : name in pseudo
      ? `${name}: ${pseudo[name]}`
      : `${asWritten ? written : name}: ${(headers[name] ?? "").replace(/^[ \t]+|[ \t]+$/g, "")}`;
  }).join("\n");
}

async function withDigest(input: SignInput): Promise<Record<string, string>> {
  const headers = { ...input.headers };
  headers.digest ??= await digestOf(bytesFrom(input.body ?? "", input.binary));
  return headers;
}

/** Signs bytes with the signer's private key under a JWS algorithm (re-imported as needed). */
async function signBytes(
  signer: Issued,
  alg: string,
  data: Uint8Array<ArrayBuffer>,
): Promise<ArrayBuffer> {
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", signer.keys.privateKey);
  const hash = `SHA-${alg.slice(2)}`;
  if (alg.startsWith("PS")) {
    const key = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "RSA-PSS", hash }, false, [
      "sign",
    ]);
    return crypto.subtle.sign({ name: "RSA-PSS", saltLength: Number(alg.slice(2)) / 8 }, key, data);
  }
  if (alg.startsWith("RS")) {
    const key = await crypto.subtle.importKey(
      "pkcs8",
      pkcs8,
      { name: "RSASSA-PKCS1-v1_5", hash },
      false,
      ["sign"],
    );
    return crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, data);
  }
  if (alg.startsWith("ES")) {
    return crypto.subtle.sign({ name: "ECDSA", hash }, signer.keys.privateKey, data);
  }
  throw new Error(`no signer for ${alg}`);
}

/**
 * `instant` as an RFC 3339 time at a UTC offset (`+04:00`, `-05:30`, `+00:00`) with `digits`
 * fractional digits (0: none), as other JOSE libraries write sigT.
 */
export function rfc3339(instant: number, offsetMinutes: number, digits = 0): string {
  const local = new Date(instant + offsetMinutes * 60_000).toISOString().slice(0, 19);
  const ms = String(((instant % 1000) + 1000) % 1000).padStart(3, "0").padEnd(9, "0");
  const fraction = digits > 0 ? `.${ms.slice(0, digits)}` : "";
  const sign = offsetMinutes < 0 ? "-" : "+";
  const abs = Math.abs(offsetMinutes);
  const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${
    String(abs % 60).padStart(2, "0")
  }`;
  return `${local}${fraction}${offset}`;
}

/** Options of {@link signJws}; defaults make a valid signature. */
export interface JwsOptions {
  alg?: string;
  /** The sigD pars list (default: request-target, digest, x-request-id and the conditional ones). */
  pars?: string[];
  /**
   * The sigD pars list as a TPP library writes it; the lines are signed with lower-case names
   * unless `linesAsWritten` (names exactly as in pars).
   */
  linesAsWritten?: boolean;
  /** The sigD mId (default http://uri.etsi.org/19182/HttpHeaders). */
  mId?: string;
  /** Signing time (default: now, whole seconds, Z). */
  sigT?: string;
  /** How the key is named: x5c (default; with `chain` after the signer), kid or x5t#S256. */
  keyRef?: "x5c" | "kid" | "x5t#S256";
  kid?: string;
  chain?: Issued[];
  /** Protected header parameters to add or replace (`undefined` removes one). */
  header?: Record<string, unknown>;
  /** HMAC key for the "HMAC with the public key" attack (alg HS256). */
  hmacKey?: Uint8Array<ArrayBuffer>;
}

/** Signs a request with a detached JWS; returns its headers with Digest and x-jws-signature. */
export async function signJws(
  signer: Issued,
  input: SignInput,
  options: JwsOptions = {},
): Promise<Record<string, string>> {
  const headers = await withDigest(input);
  const alg = options.alg ?? (signer.keyType === "EC" ? "ES256" : "PS256");
  const pars = options.pars ??
    ["(request-target)", "digest", "x-request-id", ...CONDITIONAL.filter((h) => h in headers)];
  const thumbprint = b64url(await crypto.subtle.digest("SHA-256", signer.cert.rawData));
  const keyRef = options.keyRef ?? "x5c";
  const protectedHeader: Record<string, unknown> = {
    alg,
    ...(keyRef === "x5c"
      ? { x5c: [signer.base64, ...(options.chain ?? []).map((c) => c.base64)] }
      : {}),
    ...(keyRef === "kid" ? { kid: options.kid ?? "tpp-key-1" } : {}),
    ...(keyRef === "x5t#S256" ? { "x5t#S256": thumbprint } : {}),
    sigT: options.sigT ?? new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
    sigD: { mId: options.mId ?? "http://uri.etsi.org/19182/HttpHeaders", pars },
    b64: false,
    crit: ["sigT", "sigD", "b64"],
  };
  for (const [name, value] of Object.entries(options.header ?? {})) {
    if (value === undefined) delete protectedHeader[name];
    else protectedHeader[name] = value;
  }
  const encodedHeader = b64url(encoder.encode(JSON.stringify(protectedHeader)));
  const payload = lines(pars, input, headers, {}, options.linesAsWritten);
  const signingInput = bytesFrom(`${encodedHeader}.${payload}`, input.binary);
  let signature: ArrayBuffer;
  if (options.hmacKey) {
    const key = await crypto.subtle.importKey(
      "raw",
      options.hmacKey,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    signature = await crypto.subtle.sign("HMAC", key, signingInput);
  } else if (alg === "none") {
    signature = new Uint8Array([0]).buffer;
  } else {
    signature = await signBytes(signer, alg, signingInput);
  }
  return { ...headers, "x-jws-signature": `${encodedHeader}..${b64url(signature)}` };
}

/** Options of {@link signHttpSignature}. */
export interface HttpSignatureOptions {
  /**
   * The `headers` list (default: (request-target), date, digest, x-request-id and the conditional
   * ones).
   */
  headers?: string[];
  /**
   * The algorithm parameter (default rsa-sha256; `null` leaves it out). `hs2019` signs with
   * RSASSA-PSS SHA-512 (64-byte salt), as Python httpsig does; an EC signer signs ES256.
   */
  algorithm?: string | null;
  /** Replaces the keyId (default SN=<serial>,CA=<issuer DN>). */
  keyId?: string;
  /** The `created` parameter, Unix seconds (sent when given or when `(created)` is covered). */
  created?: number;
  /** The `expires` parameter, Unix seconds. */
  expires?: number;
}

/**
 * A keyId `SN=<serial>,CA=<issuer DN>` in the forms other libraries write: serial in hex (upper
 * case) or decimal, the DN's RDNs joined by "," with spaces percent-encoded (`%20`, the Berlin
 * Group guidelines' example) when `percent`.
 */
export function keyIdOf(
  signer: Issued,
  form: { serial?: "hex" | "decimal"; percent?: boolean } = {},
): string {
  const hex = signer.cert.serialNumber;
  const serial = form.serial === "decimal" ? BigInt(`0x${hex}`).toString() : hex.toUpperCase();
  const issuer = form.percent
    ? signer.cert.issuer.split(", ").join(",").replace(/ /g, "%20")
    : signer.cert.issuer;
  return `SN=${serial},CA=${issuer}`;
}

/**
 * Signs a request the Berlin Group 1.3 way; returns headers with Digest, Date (unless the input
 * has one), Signature and TPP-Signature-Certificate.
 */
export async function signHttpSignature(
  signer: Issued,
  input: SignInput,
  options: HttpSignatureOptions = {},
): Promise<Record<string, string>> {
  const headers = await withDigest(input);
  headers.date ??= new Date().toUTCString();
  const names = options.headers ??
    [
      "(request-target)",
      "date",
      "digest",
      "x-request-id",
      ...CONDITIONAL.filter((h) => h in headers),
    ];
  const created = options.created ??
    (names.includes("(created)") ? Math.floor(Date.now() / 1000) : undefined);
  const pseudo: Record<string, string> = {};
  if (created !== undefined) pseudo["(created)"] = String(created);
  if (options.expires !== undefined) pseudo["(expires)"] = String(options.expires);
  const algorithm = options.algorithm === undefined ? "rsa-sha256" : options.algorithm;
  const signature = await signBytes(
    signer,
    signer.keyType === "EC" ? "ES256" : algorithm === "hs2019" ? "PS512" : "RS256",
    bytesFrom(lines(names, input, headers, pseudo), input.binary),
  );
  const keyId = options.keyId ??
    `SN=${signer.cert.serialNumber.toUpperCase()},CA=${signer.cert.issuer}`;
  const times = (created !== undefined ? `,created=${created}` : "") +
    (options.expires !== undefined ? `,expires=${options.expires}` : "");
  const algorithmParam = algorithm === null ? "" : `,algorithm="${algorithm}"`;
  return {
    ...headers,
    signature: `keyId="${keyId}"${algorithmParam}${times},headers="${names.join(" ")}",signature="${
      b64(signature)
    }"`,
    "tpp-signature-certificate": signer.base64,
  };
}

/** A CA, a TPP certificate and a policy that requires a transport certificate, Digest and JWS. */
export interface SignedPostFixture {
  ca: Issued;
  tpp: Issued;
  /** A complete policy (upstream `${UPSTREAM_URL}`) requiring certificate, Digest and JWS on POSTs. */
  policy: string;
  /** A freshly signed payment initiation: path and fetch init. */
  request(): Promise<{ path: string; init: RequestInit }>;
}

/** A single payment body that passes every body rule (amount "123.50"). */
export const PAYMENT_BODY = JSON.stringify(singlePayment());

/** Path of the signed payment initiations: a product the default policy offers. */
export const PAYMENT_TARGET = "/v1/payments/domestic";

/**
 * A payment initiation signed (Digest + JWS) by `tpp` with a fresh X-Request-ID, its transport
 * certificate in nginx's header: path and fetch init.
 */
export async function signedPayment(tpp: Issued): Promise<{ path: string; init: RequestInit }> {
  const input = {
    method: "POST",
    target: PAYMENT_TARGET,
    headers: initiationHeaders({
      "x-request-id": crypto.randomUUID(),
      "psu-id": "PSU-1234",
      "tpp-redirect-uri": "https://tpp.example/return",
    }),
    body: PAYMENT_BODY,
  };
  const headers = await signJws(tpp, input);
  return {
    path: input.target,
    init: {
      method: "POST",
      headers: { ...headers, "x-ssl-client-cert": nginxHeader(tpp) },
      body: PAYMENT_BODY,
    },
  };
}

/** The fixture the tests and the bench use for signed POSTs. */
export async function signedPostFixture(): Promise<SignedPostFixture> {
  const ca = await createCa();
  const tpp = await issue(ca);
  const policy = `
upstream:
  url: \${UPSTREAM_URL}
trust:
  anchors: [${yamlString(ca.pem)}]
defaults:
  tpp_certificate: { form: nginx, required: true }
groups:
  pis:
    digest: { required: true }
    jws_signature: { required: true }
`;
  return {
    ca,
    tpp,
    policy,
    request: () => signedPayment(tpp),
  };
}

/**
 * The cost of one JWS verification as the gateway does it per request (certificate chain and key
 * import cached, Digest recomputed, signature checked): mean wall time and process CPU.
 */
export async function jwsVerificationCost(
  fixture: SignedPostFixture,
  iterations = 200,
): Promise<{ meanMs: number; cpuUs: number; iterations: number }> {
  const store = new TrustStore(trustSection.parse({ anchors: [fixture.ca.pem] }));
  const verifier = new JwsVerifier(store, {
    algorithms: ["PS256", "RS256", "ES256"],
    sigtSkewSeconds: 300,
    coverage: {
      always: ["(request-target)", "digest", "x-request-id"],
      whenPresent: CONDITIONAL,
    },
    group: "pis",
  });
  const { path, init } = await fixture.request();
  const headers = new Headers(init.headers);
  const body = encoder.encode(init.body as string);
  const once = () =>
    verifier.verify(
      headers.get("x-jws-signature")!,
      { method: "POST", target: path, headers, now: Date.now() },
      () => checkDigest(headers.get("digest")!, body),
    );
  await once();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < iterations; i++) await once();
  const used = process.cpuUsage(cpu);
  return {
    meanMs: (performance.now() - started) / iterations,
    cpuUs: (used.user + used.system) / iterations,
    iterations,
  };
}
