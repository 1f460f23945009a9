/**
 * Fuzzing of the who-is-calling and shared-state checks: the default policy with a trusted CA,
 * transport certificates, Digest and JWS required on payments, three rate limits that apply at
 * once with a tier over them, and X-Request-ID replay. Generated sequences of payment requests,
 * signed by the test's TPPs (some tampered with after signing, some repeated), each checked
 * against a model written from the documents: who is refused with what, what a repeat gets, and
 * which limit answers 429 with which Retry-After.
 */
import fc from "fast-check";
import { parse, stringify } from "yaml";
import { type Operation, OPERATIONS } from "../../src/psd2/catalogue.ts";
import { digestOf } from "../../src/signing/digest.ts";
import {
  bytesOf,
  type Expectation,
  type FuzzRequest,
  render,
  upstreamPathOf,
  utf8,
  type ValidRequest,
  validRequest,
} from "./arbitraries.ts";
import { DEFAULT_POLICY } from "./gateway.ts";
import { createCa, issue, type Issued, nginxHeader } from "./pki.ts";
import { type JwsOptions, signJws } from "./signing.ts";

/** The TPPs of the fuzzing, by their organizationIdentifier. */
export const TPP_IDS = {
  gold: "PSDGE-NBG-111111",
  standard: "PSDGE-NBG-222222",
  other: "PSDGE-NBG-333333",
} as const;

/** Certificates of the fuzzing, issued once per test file. */
export interface SignedPki {
  ca: Issued;
  gold: Issued;
  standard: Issued;
  /** Another trusted TPP, whose signature on a request of the callers is not theirs. */
  other: Issued;
  /** A certificate of an untrusted CA. */
  rogue: Issued;
  /** A trusted TPP certificate without the payment role (PSP_AI only). */
  aisOnly: Issued;
}

/** Issues the certificates (RSA keys take a moment each). */
export async function signedPki(): Promise<SignedPki> {
  const ca = await createCa();
  const rogueCa = await createCa("Rogue CA");
  return {
    ca,
    gold: await issue(ca, { orgId: TPP_IDS.gold }),
    standard: await issue(ca, { orgId: TPP_IDS.standard }),
    other: await issue(ca, { orgId: TPP_IDS.other }),
    rogue: await issue(rogueCa, { orgId: TPP_IDS.standard }),
    aisOnly: await issue(ca, { orgId: TPP_IDS.standard, roles: ["PSP_AI"] }),
  };
}

const DAY_MS = 86_400_000;

/** A limit of the policy: requests per day, counted by these key parts. */
interface LimitRule {
  name: string;
  key: ("tpp" | "psu_id" | "operation")[];
  limit: number;
}

/** Three limits that apply at once, with different waits once used up. */
const LIMITS: LimitRule[] = [
  { name: "per_tpp", key: ["tpp"], limit: 4 },
  { name: "per_psu", key: ["tpp", "psu_id"], limit: 2 },
  { name: "per_operation", key: ["tpp", "operation"], limit: 3 },
];

/** The gold tier's overrides. */
const GOLD: Record<string, number> = { per_tpp: 7, per_psu: 3 };

function limitsOf(tpp: string): LimitRule[] {
  return tpp === TPP_IDS.gold
    ? LIMITS.map((rule) => ({ ...rule, limit: GOLD[rule.name] ?? rule.limit }))
    : LIMITS;
}

/**
 * The default policy with a trusted CA, a transport certificate required everywhere, Digest and
 * JWS required on payments, the three limits and the gold tier.
 */
export function signedPolicy(pki: SignedPki): string {
  const policy = parse(DEFAULT_POLICY);
  policy.trust = { anchors: [pki.ca.pem] };
  policy.defaults.tpp_certificate = { form: "nginx", required: true };
  policy.defaults.rate_limit = {
    fail: "open",
    limits: Object.fromEntries(
      LIMITS.map((rule) => [rule.name, { key: rule.key, limit: rule.limit, window: "1d" }]),
    ),
    tiers: { gold: Object.fromEntries(Object.entries(GOLD).map(([n, limit]) => [n, { limit }])) },
    tpps: { [TPP_IDS.gold]: "gold" },
  };
  policy.groups = { pis: { digest: { required: true }, jws_signature: { required: true } } };
  return stringify(policy);
}

// ---------------------------------------------------------------------------------------------
// Steps.

/** What is done to a signed request before it is sent. */
export const TAMPERS = [
  "noCertificate",
  "rogueCertificate",
  "withoutPaymentRole",
  "otherSigner",
  "bodyChanged",
  "headerChanged",
  "staleSigT",
  "futureSigT",
  "noSignature",
  "algNone",
] as const;
type Tamper = typeof TAMPERS[number] | "none";

type Caller = "gold" | "standard";

/** A sequence step: a new signed request, or one sent before sent again. */
export type Step =
  | { kind: "send"; valid: ValidRequest; caller: Caller; psu?: string; tamper: Tamper }
  | {
    kind: "repeat";
    /** Which earlier request (modulo their number). */
    of: number;
    /** Sent by the other caller (signed again with its certificates). */
    otherCaller: boolean;
    /** Body changed and signed again, same X-Request-ID. */
    changed: boolean;
  };

/**
 * Payment operations (all require Digest and JWS under the policy); the initiation, the status
 * read and the authorisation start more often, so that the per-operation limit is reached.
 */
const PAYMENTS = OPERATIONS.filter((op) => op.group === "pis");
const FREQUENT = ["initiatePayment", "getPaymentInitiationStatus", "startPaymentAuthorisation"];

/** PSU-IDs: few, so that the per-PSU limit is reached; one in Georgian (UTF-8 on the wire). */
const PSUS = ["PSU-1", "PSU-2", "ნინო"];

const sendStep: fc.Arbitrary<Step> = fc.record({
  kind: fc.constant("send" as const),
  valid: fc.oneof(
    fc.constantFrom(...PAYMENTS.filter((op) => FREQUENT.includes(op.id))),
    fc.constantFrom(...PAYMENTS),
  ).chain(validRequest),
  caller: fc.constantFrom<Caller>("gold", "standard"),
  psu: fc.option(fc.constantFrom(...PSUS), { nil: undefined, freq: 4 }),
  tamper: fc.oneof(
    { weight: 12, arbitrary: fc.constant<Tamper>("none") },
    { weight: 5, arbitrary: fc.constantFrom<Tamper>(...TAMPERS) },
  ),
}, { requiredKeys: ["kind", "valid", "caller", "tamper"] });

const repeatStep: fc.Arbitrary<Step> = fc.record({
  kind: fc.constant("repeat" as const),
  of: fc.nat(99),
  otherCaller: fc.boolean(),
  changed: fc.boolean(),
});

/** Sequences of 1 to 14 steps (most of 5 or more, so that limits are reached), a new request first. */
export const signedSteps: fc.Arbitrary<Step[]> = fc.tuple(
  sendStep,
  fc.array(fc.oneof({ weight: 3, arbitrary: sendStep }, { weight: 2, arbitrary: repeatStep }), {
    maxLength: 13,
    size: "max",
  }),
).map(([first, rest]) => [first, ...rest]);

// ---------------------------------------------------------------------------------------------
// Requests.

/** A request as the sequence knows it: the wire form and what it was made of. */
export interface SentRequest {
  request: FuzzRequest;
  valid: ValidRequest;
  caller: Caller;
  tamper: Tamper;
  psu?: string;
  id: string;
  /** The body as sent (a byte string). */
  body?: string;
}

/** Headers the tpp_uris check judges against the certificate's domains: left to other fuzzers. */
const LEFT_OUT = ["tpp-notification-uri", "tpp-notification-content-preferred", "psu-id"];

function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * Signs a request of `caller` (byte for byte, as a TPP signs what it sends) and applies the
 * tamper; the result is the wire form.
 */
export async function signedRequest(
  pki: SignedPki,
  base: { valid: ValidRequest; caller: Caller; psu?: string; tamper: Tamper; id: string },
  body: string | undefined,
): Promise<SentRequest> {
  const { valid, caller, psu, tamper, id } = base;
  const op = valid.op;
  const headers: [string, string][] = valid.headers
    .filter(([name]) => !LEFT_OUT.includes(name))
    .map(([name, value]) => [name, name === "x-request-id" ? id : value]);
  if (psu !== undefined && op.headers.includes("psu-id")) headers.push(["psu-id", utf8(psu)]);
  const { target } = render(valid, { mutation: "" });
  const transport = tamper === "rogueCertificate"
    ? pki.rogue
    : tamper === "withoutPaymentRole"
    ? pki.aisOnly
    : pki[caller];
  const signer = tamper === "otherSigner" ? pki.other : transport;
  const now = Date.now();
  const options: JwsOptions = {
    ...(tamper === "staleSigT" ? { sigT: isoSeconds(now - 600_000) } : {}),
    ...(tamper === "futureSigT" ? { sigT: isoSeconds(now + 600_000) } : {}),
    ...(tamper === "algNone" ? { alg: "none" } : {}),
  };
  const digest = await digestOf(bytesOf(body ?? ""));
  const signed = await signJws(signer, {
    method: op.method,
    target,
    headers: { ...Object.fromEntries(headers), digest },
    body,
    binary: true,
  }, options);
  let wire = [...headers, ["digest", digest], ["x-jws-signature", signed["x-jws-signature"]]] as [
    string,
    string,
  ][];
  if (tamper === "noSignature") wire = wire.filter(([name]) => name !== "x-jws-signature");
  if (tamper === "headerChanged") {
    wire = wire.map(([n, v]) => [n, n === "x-request-id" ? crypto.randomUUID() : v]);
  }
  if (tamper !== "noCertificate") wire.push(["x-ssl-client-cert", nginxHeader(transport)]);
  const sentBody = tamper === "bodyChanged" && body !== undefined ? body + " " : body;
  return {
    request: {
      op: op.id,
      method: op.method,
      target,
      headers: wire,
      ...(sentBody !== undefined ? { body: sentBody } : {}),
      ...(valid.chunks && sentBody !== undefined ? { chunks: valid.chunks } : {}),
      mutation: `${caller}${psu ? ` (PSU ${psu})` : ""}: ${op.id}, ${tamper}`,
    },
    valid,
    caller,
    tamper,
    psu: psu !== undefined && op.headers.includes("psu-id") ? psu : undefined,
    id,
    body,
  };
}

// ---------------------------------------------------------------------------------------------
// The model.

/** What the model expects of one request, besides the forwarded form. */
export interface Expected {
  expect: Expectation;
  /** For a 429: the Retry-After range in seconds. */
  retryAfter?: [number, number];
}

/** What the gateway's shared state should hold, as the documents describe it. */
export class Model {
  /** Requests counted per limit key (every counted request is well within the day). */
  #counts = new Map<string, number>();
  /** Forwarded writes by TPP and X-Request-ID: their request and answer. */
  #writes = new Map<string, { fingerprint: string; status: number; body: Uint8Array }>();

  /** Who is calling and signature rules: the documented refusal of a tampered request. */
  static refusal(tamper: Tamper, hasBody: boolean): Expectation | undefined {
    const reject = (status: number, code: string, path?: string): Expectation => ({
      kind: "reject",
      status,
      code,
      ...(path ? { path } : {}),
    });
    switch (tamper) {
      case "none":
        return undefined;
      case "noSignature":
        // Digest without a signature header (signature_pairing, before the certificate).
        return reject(401, "SIGNATURE_MISSING");
      case "noCertificate":
        return reject(401, "CERTIFICATE_MISSING");
      case "rogueCertificate":
        return reject(401, "CERTIFICATE_INVALID");
      case "withoutPaymentRole":
        return reject(401, "ROLE_INVALID");
      case "bodyChanged":
        return hasBody ? reject(400, "FORMAT_ERROR", "Digest") : undefined;
      case "otherSigner":
      case "headerChanged":
      case "staleSigT":
      case "futureSigT":
      case "algNone":
        return reject(401, "SIGNATURE_INVALID", "x-jws-signature");
    }
  }

  #limitKeys(sent: SentRequest): { rule: LimitRule; key: string }[] {
    const tpp = TPP_IDS[sent.caller];
    return limitsOf(tpp).flatMap((rule) => {
      // Without PSU-ID (and no token subject here) the request counts as the caller's one
      // unknown PSU: leaving the header out never escapes a per-PSU limit.
      const psu = sent.psu ?? ` unknown PSU of ${tpp}`;
      const parts = rule.key.map((k) =>
        k === "tpp" ? tpp : k === "psu_id" ? psu : sent.valid.op.id
      );
      return [{ rule, key: `${rule.name}:${parts.join("|")}` }];
    });
  }

  /** The expected outcome of `sent`, and the state after it. */
  next(sent: SentRequest): Expected {
    const op: Operation = sent.valid.op;
    const refused = Model.refusal(sent.tamper, sent.body !== undefined);
    if (refused) return { expect: refused };
    const write = op.method !== "GET";
    const writeKey = `${TPP_IDS[sent.caller]}|${sent.id}`;
    const fingerprint = `${op.method} ${sent.request.target}\n${sent.request.body ?? ""}`;
    const kept = write ? this.#writes.get(writeKey) : undefined;
    if (kept && kept.fingerprint === fingerprint) {
      return { expect: { kind: "replay", status: kept.status, body: kept.body } };
    }
    if (kept) {
      return {
        expect: { kind: "reject", status: 400, code: "FORMAT_ERROR", path: "X-Request-ID" },
      };
    }
    const counted = this.#limitKeys(sent);
    const full = counted.filter(({ rule, key }) => (this.#counts.get(key) ?? 0) >= rule.limit);
    if (full.length > 0) {
      // The longest wait answers: the limit with the longest emission interval (day / limit).
      const longest = full.reduce((a, b) => (b.rule.limit < a.rule.limit ? b : a));
      const interval = DAY_MS / longest.rule.limit / 1000;
      return {
        expect: {
          kind: "reject",
          status: 429,
          code: "ACCESS_EXCEEDED",
          headers: { "ratelimit-limit": String(longest.rule.limit), "ratelimit-remaining": "0" },
        },
        retryAfter: [Math.floor(interval - 120), Math.ceil(interval)],
      };
    }
    let tightest: { limit: number; remaining: number } | undefined;
    for (const { rule, key } of counted) {
      const used = (this.#counts.get(key) ?? 0) + 1;
      this.#counts.set(key, used);
      const remaining = rule.limit - used;
      if (!tightest || remaining < tightest.remaining) tightest = { limit: rule.limit, remaining };
    }
    return {
      expect: {
        kind: "forward",
        upstreamPath: upstreamPathOf(sent.valid),
        headers: {
          "ratelimit-limit": String(tightest!.limit),
          "ratelimit-remaining": String(tightest!.remaining),
        },
      },
    };
  }

  /** Records the answer of a forwarded write (the upstream's, kept for a replay). */
  answered(sent: SentRequest, status: number, body: Uint8Array): void {
    if (sent.valid.op.method === "GET") return;
    this.#writes.set(`${TPP_IDS[sent.caller]}|${sent.id}`, {
      fingerprint: `${sent.valid.op.method} ${sent.request.target}\n${sent.request.body ?? ""}`,
      status,
      body,
    });
  }
}
