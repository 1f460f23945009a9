/**
 * Detached JWS request signatures (`x-jws-signature`, JAdES / Open Banking Europe profile):
 * `BASE64URL(protected)..BASE64URL(signature)` with `b64: false`, `sigT` (RFC 3339, any offset),
 * and `sigD` naming the signed HTTP headers (mechanism http://uri.etsi.org/19182/HttpHeaders, with
 * or without a final slash; names in any case). The payload is one line per `pars` entry,
 * `<lowercase name>: <trimmed value>` (or the name as written in `pars`), joined by "\n". The
 * HttpHeaders mechanism (ETSI TS 119 182-1, clause 5.2.8) makes no header mandatory: what `pars`
 * must cover is the policy's, by default the Berlin Group minimum (signer.ts).
 */
import { base64Bytes } from "../lib/base64.ts";
import { GatewayError } from "../psd2/errors.ts";
import { signedBytes, type SignedRequest } from "./signer.ts";
import { verifyValue } from "./value.ts";
import { outsideSkew, RequestSignatureVerifier, type SchemeOptions } from "./verifier.ts";

/** Asymmetric JWS algorithms a policy may allow (never `none`, never HMAC). */
export const JWS_ALGORITHMS = [
  "PS256",
  "PS384",
  "PS512",
  "RS256",
  "RS384",
  "RS512",
  "ES256",
  "ES384",
  "ES512",
] as const;

/** The sigD mechanism of signed HTTP headers (also accepted with a trailing slash). */
export const HTTP_HEADERS_MECHANISM = "http://uri.etsi.org/19182/HttpHeaders";
const MECHANISMS: readonly unknown[] = [HTTP_HEADERS_MECHANISM, `${HTTP_HEADERS_MECHANISM}/`];

/** Header parameters this verifier understands in `crit`, all of which a signature must list. */
const CRIT = ["sigT", "sigD", "b64"];

const HEADER = "x-jws-signature";
/** The longest x5c chain parsed (signer and intermediates; the anchor need not be sent). */
const MAX_X5C = 4;
const COMPACT_DETACHED = /^([A-Za-z0-9_-]+)\.\.([A-Za-z0-9_-]+)$/;
/** An RFC 3339 date-time: fractional seconds optional, `Z` or a numeric offset. */
const SIG_T =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Options of a {@link JwsVerifier}, from the policy. */
export interface JwsVerifierOptions extends SchemeOptions {
  algorithms: readonly string[];
  /** Largest allowed distance of sigT from the bank's clock, in seconds. */
  sigtSkewSeconds: number;
}

function invalid(text: string): GatewayError {
  return new GatewayError(401, "SIGNATURE_INVALID", text, { path: HEADER });
}

/**
 * The instant an RFC 3339 `sigT` names, in milliseconds since the epoch; `undefined` when it is
 * no RFC 3339 date-time or names no real date (February 30, hour 24, offset +24:00).
 */
export function sigTInstant(sigT: string): number | undefined {
  const match = SIG_T.exec(sigT);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const fraction = Number(`0.${match[7] ?? "0"}`) * 1000;
  const [offsetHours, offsetMinutes] = [Number(match[10] ?? 0), Number(match[11] ?? 0)];
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) {
    return undefined;
  }
  const local = Date.UTC(year, month - 1, day, hour, minute, second);
  const date = new Date(local);
  if (
    year < 1 || date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 ||
    date.getUTCDate() !== day
  ) {
    return undefined;
  }
  const offset = (match[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return local + fraction - offset;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

function decodeHeader(part: string): Record<string, unknown> {
  try {
    const header = JSON.parse(UTF8.decode(base64Bytes(part)));
    if (header && typeof header === "object" && !Array.isArray(header)) return header;
  } catch {
    // Reported below.
  }
  throw invalid("The JWS protected header must be base64url-encoded JSON");
}

/** A detached JWS read: its parts, protected header and covered names. */
interface ReadJws {
  /** The covered names, lower case. */
  names: string[];
  protectedPart: string;
  signature: string;
  header: Record<string, unknown>;
  alg: string;
  /** The sigD pars as written (names in any case). */
  pars: string[];
  /** The instant sigT names. */
  signedAt: number;
}

/**
 * Verifies `x-jws-signature` values; built once per operation, shares the trust store's parsed
 * certificates and imported keys.
 */
export class JwsVerifier extends RequestSignatureVerifier<ReadJws, JwsVerifierOptions> {
  protected readonly scheme = {
    header: HEADER,
    certificate: HEADER,
    subject: "The JWS",
    list: 'The JWS "sigD.pars"',
  };

  protected read(value: string): ReadJws {
    const match = COMPACT_DETACHED.exec(value.trim());
    if (!match) {
      throw invalid(
        'Header "x-jws-signature" must be a compact detached JWS: <protected>..<signature>',
      );
    }
    const [, protectedPart, signature] = match;
    const header = decodeHeader(protectedPart);
    const { algorithms } = this.options;
    const alg = header.alg;
    if (typeof alg !== "string" || !algorithms.includes(alg)) {
      throw invalid(
        `The JWS "alg" must be one of ${algorithms.join(", ")}, got ${JSON.stringify(alg ?? null)}`,
      );
    }
    const crit = header.crit;
    if (!Array.isArray(crit) || crit.some((c) => typeof c !== "string")) {
      throw invalid(`The JWS "crit" must list ${CRIT.join(", ")}`);
    }
    const unknown = crit.find((c) => !CRIT.includes(c));
    if (unknown !== undefined) {
      throw invalid(`The JWS "crit" names "${unknown}", which is not understood`);
    }
    const absent = CRIT.find((c) => !crit.includes(c));
    if (absent !== undefined) throw invalid(`The JWS "crit" must list "${absent}"`);
    if (header.b64 !== false) {
      throw invalid('The JWS "b64" must be false (unencoded detached payload)');
    }
    const sigT = header.sigT;
    const signedAt = typeof sigT === "string" ? sigTInstant(sigT) : undefined;
    if (signedAt === undefined) {
      throw invalid(
        'The JWS "sigT" must be an RFC 3339 time like 2026-01-31T12:00:00Z or 2026-01-31T16:00:00.5+04:00',
      );
    }
    const sigD = header.sigD as { mId?: unknown; pars?: unknown } | undefined;
    if (!sigD || typeof sigD !== "object" || !MECHANISMS.includes(sigD.mId)) {
      throw invalid(`The JWS "sigD" must have mId "${HTTP_HEADERS_MECHANISM}"`);
    }
    const pars = sigD.pars;
    if (
      !Array.isArray(pars) || pars.length === 0 ||
      pars.some((p) => typeof p !== "string" || p === "")
    ) {
      throw invalid('The JWS "sigD.pars" must be a list of header names');
    }
    // Header names are case-insensitive: the coverage rules (and "listed twice") apply to the
    // lower-case names, which are also the names in the signed lines.
    const names = pars.map((p: string) => p.toLowerCase());
    return { protectedPart, signature, header, alg, pars, names, signedAt };
  }

  protected checkTime({ header, signedAt }: ReadJws, request: SignedRequest): void {
    const { sigtSkewSeconds } = this.options;
    if (outsideSkew(request.now, signedAt, sigtSkewSeconds * 1000)) {
      throw invalid(
        `The JWS "sigT" ${header.sigT} is more than ${sigtSkewSeconds} s away from the bank's clock`,
      );
    }
  }

  protected async findSigner({ header }: ReadJws) {
    const role = { label: "signing certificate", path: HEADER };
    const x5c = header.x5c;
    const x5t = header["x5t#S256"];
    if (x5c !== undefined) {
      if (
        !Array.isArray(x5c) || x5c.length === 0 || x5c.length > MAX_X5C ||
        x5c.some((c) => typeof c !== "string")
      ) {
        throw invalid(
          `The JWS "x5c" must be a list of 1 to ${MAX_X5C} base64 certificates, the signer's first`,
        );
      }
      const [signer, ...extra] = await Promise.all(
        x5c.map((c: string) => this.store.certificate(c, role)),
      );
      if (x5t !== undefined && x5t !== signer.x5tS256) {
        throw invalid('The JWS "x5t#S256" does not match the first certificate of "x5c"');
      }
      return { signer, extra };
    }
    if (typeof x5t === "string") {
      const signer = await this.store.signingKey({ x5tS256: x5t });
      if (!signer) throw invalid(`The JWS "x5t#S256" names no signing certificate the bank knows`);
      return { signer };
    }
    if (typeof header.kid === "string") {
      const signer = await this.store.signingKey({ kid: header.kid });
      if (!signer) throw invalid(`The JWS "kid" "${header.kid}" names no key the bank knows`);
      return { signer };
    }
    throw invalid('The JWS header must carry "x5c", "x5t#S256" or "kid"');
  }

  protected algorithm({ alg }: ReadJws) {
    return { jws: alg, label: `the JWS "alg" ${alg}` };
  }

  protected async matches(
    { protectedPart, signature, alg, pars, names }: ReadJws,
    key: CryptoKey,
    request: SignedRequest,
  ): Promise<boolean> {
    // The signed lines name each header in lower case (REFERENCE, as draft-cavage's signing
    // string); a TPP that wrote pars in another case may have signed its lines with the names as
    // it wrote them, which bind the same values: that form is tried second.
    const payloads = [signedBytes(names, request)];
    if (pars.some((p, i) => p !== names[i])) {
      const written = pars.map((p, i) => names[i] === "(request-target)" ? names[i] : p);
      payloads.push(signedBytes(written, request));
    }
    // The JWS signing input with b64 false: ASCII(BASE64URL(protected)) || "." || payload.
    const signed = `${protectedPart}.`;
    let value: Uint8Array<ArrayBuffer>;
    try {
      value = base64Bytes(signature);
    } catch {
      return false;
    }
    for (const payload of payloads) {
      const input = new Uint8Array(signed.length + payload.length);
      for (let i = 0; i < signed.length; i++) input[i] = signed.charCodeAt(i);
      input.set(payload, signed.length);
      if (await verifyValue(alg, key, value, input)) return true;
    }
    return false;
  }
}
