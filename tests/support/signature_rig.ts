/**
 * The rig of the signature checks' tests (`jws_signature`, `http_signature`): the certificates
 * each certificate rule is about, a payment initiation to sign, and a gateway (in-process, with a
 * real HTTP upstream) that sends one signed request and says what came back and whether it reached
 * the core.
 */
import assert from "node:assert/strict";
import { gatewayApp } from "./gateway.ts";
import { startUpstream } from "./upstream.ts";
import { createCa, issue, type Issued, type TppOptions } from "./pki.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "./policies.ts";
import { PAYMENT_BODY, PAYMENT_TARGET, type SignInput } from "./signing.ts";

const DAY = 86_400_000;

/** The certificates the test CA issues, by the rule each is about. */
const ISSUED = {
  /** A trusted TPP (PSDGE-NBG-123456) with both roles. */
  tpp: {},
  expired: {
    notBefore: new Date(Date.now() - 400 * DAY),
    notAfter: new Date(Date.now() - 2 * DAY),
  },
  /** Serial 0badc0de, which {@link signatureRig}'s policy blocks. */
  blocked: { serial: "0badc0de" },
  /** Without the payment role. */
  aisOnly: { roles: ["PSP_AI"] },
  /** Another TPP's. */
  otherTpp: { orgId: "PSDGE-NBG-999999" },
  tppEc: { keyType: "EC" },
  /** A QWAC (QC type id-etsi-qct-web). */
  qwac: { qcTypes: ["QWAC"] },
} satisfies Record<string, TppOptions>;

/** The test CA, the certificates of {@link ISSUED}, and `rogue`, issued by another CA. */
export type Signers = { ca: Issued; rogue: Issued } & Record<keyof typeof ISSUED, Issued>;

/** Makes the {@link Signers}. */
export async function signers(): Promise<Signers> {
  const ca = await createCa();
  const entries = await Promise.all(
    Object.entries(ISSUED).map(async ([name, options]) => [name, await issue(ca, options)]),
  );
  const rogue = await issue(await createCa("Rogue CA"));
  return { ca, rogue, ...Object.fromEntries(entries) } as Signers;
}

/** A payment initiation with PSU-ID and TPP-Redirect-URI, these headers over its own. */
export function paymentInput(headers: Record<string, string> = {}): SignInput {
  return {
    method: "POST",
    target: PAYMENT_TARGET,
    headers: {
      "x-request-id": crypto.randomUUID(),
      "psu-ip-address": "192.168.8.78",
      "psu-id": "PSU-1234",
      "tpp-redirect-uri": "https://tpp.example/ok",
      "content-type": "application/json",
      ...headers,
    },
    body: PAYMENT_BODY,
  };
}

/** What a request sends besides its headers. */
export interface SendOptions {
  policy?: PolicyInput;
  body?: string;
  target?: string;
}

/** What a {@link SignatureRig} request expects of a refusal. */
export interface Refusal {
  status?: number;
  code: string;
  text?: RegExp;
  path?: string;
}

/** The gateway of one signature check's tests. */
export interface SignatureRig {
  /** The rig's policy with these parts over it. */
  policy(...parts: PolicyInput[]): PolicyInput;
  /** The policy with these options of the check for initiatePayment. */
  forPayments(options: LevelInput[SignatureCheck]): PolicyInput;
  /** Sends a payment initiation with these headers; the answer and what reached the core. */
  run(headers: Record<string, string>, options?: SendOptions): Promise<{
    response: Response;
    body: { tppMessages?: { code: string; path?: string; text: string }[] };
    reached: number;
    log: Record<string, unknown>[];
  }>;
  /** Sends it and asserts the refusal, and that nothing reached the core. */
  rejected(
    headers: Record<string, string>,
    expected: Refusal,
    options?: SendOptions,
  ): Promise<void>;
}

/** The signature checks. */
export type SignatureCheck = "jws_signature" | "http_signature";

/**
 * The rig of `check`: a policy that trusts `signers.ca`, blocks serial 0badc0de and requires the
 * signature (with `base` over it), and requests through a fresh gateway.
 */
export function signatureRig(
  check: SignatureCheck,
  signers: Signers,
  base: PolicyInput = {},
): SignatureRig {
  const rigPolicy = buildPolicy({
    trust: {
      anchors: [signers.ca.pem],
      blocked: [{ serial: "0BADC0DE", note: "compromised key" }],
    },
    defaults: { [check]: { required: true } },
  }, base);
  const policy = (...parts: PolicyInput[]) => buildPolicy(rigPolicy, ...parts);
  async function run(headers: Record<string, string>, options: SendOptions = {}) {
    await using upstream = startUpstream(() =>
      Response.json({ paymentId: "p-1" }, { status: 201 })
    );
    await using gateway = await gatewayApp({
      policy: options.policy ?? rigPolicy,
      upstream: upstream.url,
    });
    const response = await gateway.fetch(options.target ?? PAYMENT_TARGET, {
      method: "POST",
      headers,
      body: options.body ?? PAYMENT_BODY,
    });
    return {
      response,
      body: await response.json(),
      reached: upstream.received.length,
      log: gateway.log.lines,
    };
  }
  return {
    policy,
    forPayments: (options) => policy({ operations: { initiatePayment: { [check]: options } } }),
    run,
    async rejected(headers, expected, options = {}) {
      const { response, body, reached } = await run(headers, options);
      assert.equal(response.status, expected.status ?? 401, JSON.stringify(body));
      const [message] = body.tppMessages ?? [];
      assert.equal(message?.code, expected.code, message?.text);
      if (expected.text) assert.match(message.text, expected.text);
      if (expected.path) assert.equal(message.path, expected.path);
      assert.equal(reached, 0, "a rejected request reached the upstream");
    },
  };
}
