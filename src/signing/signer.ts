/**
 * What both request-signature schemes share: which headers a signature must cover, and the
 * checks on the signer's certificate (trust store, roles, same TPP as the transport certificate).
 */
import { z } from "zod";
import type { Group } from "../psd2/catalogue.ts";
import { GatewayError } from "../psd2/errors.ts";
import type { CertificateInfo } from "../pki/certificate.ts";
import type { TrustStore } from "../pki/trust.ts";

/** A request as a signature verifier needs it. */
export interface SignedRequest {
  /** Upper-case method. */
  method: string;
  /** Path and query as received, for `(request-target)`. */
  target: string;
  headers: Headers;
  /** Milliseconds since the epoch. */
  now: number;
  /** The TPP id of the verified transport certificate, when there is one. */
  transportTpp?: string;
}

/** A lower-case header name (RFC 9110 token) or the `(request-target)` pseudo-header. */
const HEADER_NAME = /^(\(request-target\)|[a-z0-9!#$%&'*+.^_`|~-]+)$/;

/** Which headers a signature must cover. */
export interface Coverage {
  /** Always (for example `digest`, `x-request-id`, `(request-target)`). */
  always: readonly string[];
  /** Whenever the request carries them (PSU and redirect headers). */
  whenPresent: readonly string[];
  /** Pseudo-headers the scheme knows besides `(request-target)`, for example `(created)`. */
  pseudo?: readonly string[];
}

/**
 * What both schemes sign, one line per covered name joined by "\n": `(request-target): <lower-case
 * method> <path and query>`, another pseudo-header's value in `pseudo` (draft-cavage's `(created)`),
 * or `<name>: <value>` as `Headers` trimmed it (of spaces, tabs; `trim()` cut a final 0xA0 byte).
 */
export function signedLines(
  names: readonly string[],
  request: Pick<SignedRequest, "method" | "target" | "headers">,
  pseudo: Record<string, string> = {},
): string {
  return names.map((name) =>
    name === "(request-target)"
      ? `(request-target): ${request.method.toLowerCase()} ${request.target}`
      : name in pseudo
      ? `${name}: ${pseudo[name]}`
      : `${name}: ${request.headers.get(name) ?? ""}`
  ).join("\n");
}

/**
 * {@link signedLines} as the bytes that were sent, which both schemes sign. Header values arrive
 * as byte strings (one character per byte), so a UTF-8 value must be taken byte for byte, not
 * encoded to UTF-8 a second time (a PSU-ID in Georgian would then never verify).
 */
export function signedBytes(
  names: readonly string[],
  request: Pick<SignedRequest, "method" | "target" | "headers">,
  pseudo: Record<string, string> = {},
): Uint8Array<ArrayBuffer> {
  const text = signedLines(names, request, pseudo);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // Nothing from the wire is above 0xFF; a caller's own text is then UTF-8, as written.
    if (code > 0xff) return new TextEncoder().encode(text);
    bytes[i] = code;
  }
  return bytes;
}

/**
 * Checks a signature's list of covered headers (lower case): nothing repeated, every required
 * header covered, every covered header present. `fail` makes the error of the scheme.
 */
export function checkCoverage(
  covered: readonly string[],
  request: SignedRequest,
  coverage: Coverage,
  fail: (text: string) => GatewayError,
): void {
  const seen = new Set<string>();
  const pseudo = new Set(coverage.pseudo);
  for (const name of covered) {
    if (!HEADER_NAME.test(name) && !pseudo.has(name)) {
      throw fail(`lists ${JSON.stringify(name)}, which is no header name`);
    }
    if (seen.has(name)) throw fail(`lists "${name}" twice`);
    seen.add(name);
  }
  for (const name of coverage.always) {
    if (!seen.has(name)) throw fail(`must cover "${name}"`);
  }
  for (const name of coverage.whenPresent) {
    if (request.headers.has(name) && !seen.has(name)) {
      throw fail(`must cover "${name}", which the request carries`);
    }
  }
  for (const name of covered) {
    if (name !== "(request-target)" && !pseudo.has(name) && !request.headers.has(name)) {
      throw fail(`covers "${name}" but the request has no such header`);
    }
  }
}

/**
 * The signer's certificate: trusted (chain, dates, blocked), with a TPP id and the group's role,
 * and from the same TPP as the transport certificate when there is one.
 */
export async function checkSigner(
  store: TrustStore,
  signer: CertificateInfo,
  options: {
    request: SignedRequest;
    group: Group;
    path: string;
    extra?: CertificateInfo[];
  },
): Promise<void> {
  const tpp = await store.checkTpp(signer, {
    label: "signing certificate",
    path: options.path,
    group: options.group,
    now: options.request.now,
    extra: options.extra,
  });
  const transport = options.request.transportTpp;
  if (transport !== undefined && transport !== tpp) {
    throw new GatewayError(
      401,
      "SIGNATURE_INVALID",
      `The signing certificate belongs to TPP "${tpp}", the transport certificate to "${transport}"`,
      { path: options.path },
    );
  }
}

const headerName = z.string().regex(
  /^(\(request-target\)|[a-z0-9-]+)$/,
  "a lower-case header name",
);

/**
 * What the Berlin Group makes every request signature cover, whichever scheme carries it (NextGenPSD2
 * implementation guidelines, "Requirements on the Signature header": `headers` must include
 * `digest` and `x-request-id`). The default of both checks, and the least a policy may ask.
 */
export const STANDARD_COVER: readonly string[] = ["digest", "x-request-id"];

/** What the standard makes a signature cover whenever the request carries it. */
export const STANDARD_COVER_WHEN_PRESENT: readonly string[] = [
  "psu-id",
  "psu-corporate-id",
  "tpp-redirect-uri",
];

/** The policy fields both signature checks share. */
export function signatureFields() {
  return {
    required: z.boolean().default(false).describe(
      "Reject requests without a signature (SIGNATURE_MISSING); when false a signature is verified when present",
    ),
    cover: z.array(headerName).default([...STANDARD_COVER]).describe(
      'Headers (lower case) every signature must cover; at least digest and x-request-id (the Berlin Group minimum). "(request-target)" binds the method and path too, which the standard does not ask: TPPs that sign only the minimum are then refused',
    ),
    cover_when_present: z.array(headerName).default([...STANDARD_COVER_WHEN_PRESENT]).describe(
      "Headers a signature must cover whenever the request carries them; at least psu-id, psu-corporate-id and tpp-redirect-uri (the standard's). consent-id or tpp-nok-redirect-uri go beyond the standard",
    ),
  };
}

/** Problems of `cover` and `cover_when_present` lists that leave out the standard's minimum. */
export function coverageProblems(
  options: { cover: readonly string[]; cover_when_present: readonly string[] },
): string[] {
  const always = STANDARD_COVER.filter((name) => !options.cover.includes(name)).map((name) =>
    `cover must include "${name}"`
  );
  const whenPresent = STANDARD_COVER_WHEN_PRESENT.filter((name) =>
    !options.cover.includes(name) && !options.cover_when_present.includes(name)
  ).map((name) => `cover_when_present must include "${name}"`);
  return [...always, ...whenPresent];
}

/** A request-signature verifier (JWS or HTTP signature). */
export interface SignatureVerifier {
  verify(
    value: string,
    request: SignedRequest,
    beforeCrypto: () => Promise<void>,
  ): Promise<CertificateInfo>;
}
