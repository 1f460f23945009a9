/**
 * Report-only runs: with every check in `report` mode, a request that breaks a rule reaches the
 * upstream and the finding is in the access log; with the same policy in `enforce` mode the same
 * request is rejected with its Berlin Group error and never reaches the upstream. One bad request
 * per request-hardening and who-is-calling check, each otherwise valid.
 */
import assert from "node:assert/strict";
import { exportJWK, generateKeyPair } from "jose";
import { CHECKS } from "../../middleware/mod.ts";
import { digestOf } from "../../src/signing/digest.ts";
import { policy, rig } from "../support/hardening.ts";
import { createCa, issue, nginxHeader } from "../support/pki.ts";
import type { LevelInput, PolicyInput } from "../support/policies.ts";
import { consentBody, initiationHeaders, REQUEST_ID, singlePayment } from "../support/requests.ts";
import { signHttpSignature, signJws } from "../support/signing.ts";

const READ = { "x-request-id": REQUEST_ID, "consent-id": "c-1" };
const PAYMENT = JSON.stringify(singlePayment());
const PAYMENT_BYTES = new TextEncoder().encode(PAYMENT);

// Who is calling: a trusted CA and its TPP, a CA the policy does not trust, and a JWKS file, so
// that tpp_certificate, the signature checks and bearer_token can run in either mode.
const ca = await createCa();
const tpp = await issue(ca);
const rogue = await issue(await createCa("Rogue CA"));
const jwksFile = await Deno.makeTempFile({ suffix: ".json" });
globalThis.addEventListener("unload", () => Deno.removeSync(jwksFile));
const { publicKey } = await generateKeyPair("RS256");
await Deno.writeTextFile(
  jwksFile,
  JSON.stringify({ keys: [{ ...await exportJWK(publicKey), kid: "k1", alg: "RS256" }] }),
);

/** A payment initiation signed with a detached JWS (Digest included) over `target`. */
async function jwsSigned(target = "/v1/payments/domestic", digest?: string) {
  const headers = initiationHeaders(digest ? { digest } : {});
  return await signJws(tpp, { method: "POST", target, headers, body: PAYMENT });
}

function read(extra: Record<string, string> = {}, path = "/v1/accounts"): [string, RequestInit] {
  return [path, { headers: { ...READ, ...extra } }];
}

function initiate(extra: Record<string, string> = {}, body = PAYMENT): [string, RequestInit] {
  return ["/v1/payments/domestic", { method: "POST", headers: initiationHeaders(extra), body }];
}

interface Case {
  check: string;
  request: [string, RequestInit];
  status: number;
  code: string;
  path: string;
}

const { creditorName: _, ...nameless } = singlePayment();
const { "psu-ip-address": _ip, ...withoutIp } = initiationHeaders();

const CASES: Case[] = [
  {
    check: "header_limits",
    request: read({ "psu-id": "p".repeat(51) }),
    status: 400,
    code: "FORMAT_ERROR",
    path: "PSU-ID",
  },
  {
    check: "request_id",
    request: read({ "x-request-id": "nope" }),
    status: 400,
    code: "FORMAT_ERROR",
    path: "X-Request-ID",
  },
  {
    check: "path_params",
    request: ["/v1/payments/sepa-transfers", initiate()[1]],
    status: 404,
    code: "PRODUCT_UNKNOWN",
    path: "payment-product",
  },
  {
    check: "query_params",
    request: read({}, "/v1/accounts/acc-1/transactions?dateFrom=2025-01-01"),
    status: 400,
    code: "FORMAT_ERROR",
    path: "bookingStatus",
  },
  {
    check: "content_type",
    request: initiate({ "content-type": "text/plain" }),
    status: 415,
    code: "CONTENT_TYPE_INVALID",
    path: "Content-Type",
  },
  {
    check: "accept",
    request: read({ accept: "text/html" }),
    status: 406,
    code: "REQUESTED_FORMATS_INVALID",
    path: "Accept",
  },
  {
    check: "psu_ip_address",
    request: ["/v1/payments/domestic", { method: "POST", headers: withoutIp, body: PAYMENT }],
    status: 400,
    code: "FORMAT_ERROR",
    path: "PSU-IP-Address",
  },
  {
    check: "psu_geo_location",
    request: read({ "psu-geo-location": "GEO:41.716667,44.783333" }),
    status: 400,
    code: "FORMAT_ERROR",
    path: "PSU-Geo-Location",
  },
  {
    check: "psu_device_id",
    request: read({ "psu-device-id": "device-1" }),
    status: 400,
    code: "FORMAT_ERROR",
    path: "PSU-Device-ID",
  },
  {
    check: "psu_http_method",
    request: read({ "psu-http-method": "HEAD" }),
    status: 400,
    code: "FORMAT_ERROR",
    path: "PSU-Http-Method",
  },
  {
    check: "psu_ip_port",
    request: read({ "psu-ip-port": "0" }),
    status: 400,
    code: "FORMAT_ERROR",
    path: "PSU-IP-Port",
  },
  {
    check: "tpp_flags",
    request: initiate({ "tpp-redirect-preferred": "yes" }),
    status: 400,
    code: "FORMAT_ERROR",
    path: "TPP-Redirect-Preferred",
  },
  {
    check: "tpp_redirect_uri",
    request: initiate({ "tpp-redirect-uri": "http://tpp.example/back" }),
    status: 400,
    code: "FORMAT_ERROR",
    path: "TPP-Redirect-URI",
  },
  {
    check: "tpp_notification_content",
    request: initiate({ "tpp-notification-content-preferred": "status=NEVER" }),
    status: 400,
    code: "FORMAT_ERROR",
    path: "TPP-Notification-Content-Preferred",
  },
  {
    check: "consent_id",
    request: read({ "consent-id": "" }, "/v1/accounts"),
    status: 400,
    code: "FORMAT_ERROR",
    path: "Consent-ID",
  },
  {
    check: "signature_pairing",
    // The body's own Digest: only the missing signature is wrong.
    request: initiate({ digest: await digestOf(PAYMENT_BYTES) }),
    status: 401,
    code: "SIGNATURE_MISSING",
    path: "x-jws-signature",
  },
  {
    check: "tpp_certificate",
    request: read({ "x-ssl-client-cert": nginxHeader(rogue) }),
    status: 401,
    code: "CERTIFICATE_INVALID",
    path: "X-SSL-Client-Cert",
  },
  {
    check: "bearer_token",
    request: read({ authorization: "Bearer x.y.z" }),
    status: 401,
    code: "TOKEN_UNKNOWN",
    path: "Authorization",
  },
  {
    // `redirect: reject` in the policy below; the certificate is valid, its domains tpp.example.
    check: "tpp_uris",
    request: initiate({
      "x-ssl-client-cert": nginxHeader(tpp),
      "tpp-redirect-uri": "https://phish.example/cb",
    }),
    status: 400,
    code: "FORMAT_ERROR",
    path: "TPP-Redirect-URI",
  },
  {
    // The policy allows SHA-256 only; a correct SHA-512 Digest under a valid JWS. (A Digest that
    // does not match would also fail the JWS, whose signed Digest is then checked again.)
    check: "digest",
    request: [
      "/v1/payments/domestic",
      {
        method: "POST",
        headers: await jwsSigned(undefined, await digestOf(PAYMENT_BYTES, "SHA-512")),
        body: PAYMENT,
      },
    ],
    status: 400,
    code: "FORMAT_ERROR",
    path: "Digest",
  },
  {
    // Signed for another path than the one it is sent to.
    check: "jws_signature",
    request: [
      "/v1/payments/domestic",
      { method: "POST", headers: await jwsSigned("/v1/payments/foreign"), body: PAYMENT },
    ],
    status: 401,
    code: "SIGNATURE_INVALID",
    path: "x-jws-signature",
  },
  {
    check: "http_signature",
    request: [
      "/v1/payments/domestic",
      {
        method: "POST",
        headers: await signHttpSignature(tpp, {
          method: "POST",
          target: "/v1/payments/domestic",
          headers: initiationHeaders(),
          body: PAYMENT,
        }, { algorithm: "hmac-sha256" }),
        body: PAYMENT,
      },
    ],
    status: 401,
    code: "SIGNATURE_INVALID",
    path: "Signature",
  },
  {
    check: "body_schema",
    request: initiate({}, JSON.stringify(nameless)),
    status: 400,
    code: "FORMAT_ERROR",
    path: "creditorName",
  },
  {
    check: "body_schema",
    request: [
      "/v1/consents",
      {
        method: "POST",
        headers: initiationHeaders(),
        body: JSON.stringify({ ...consentBody(), frequencyPerDay: 9 }),
      },
    ],
    status: 400,
    code: "FORMAT_ERROR",
    path: "frequencyPerDay",
  },
];

/** Options besides the mode, so that a check can run (bearer_token) or rejects what it judges. */
const OPTIONS: Record<string, Record<string, unknown>> = {
  bearer_token: { jwks_file: jwksFile },
  tpp_uris: { redirect: "reject" },
  digest: { algorithms: ["SHA-256"] },
};

/**
 * Every check with a mode, in the given mode; ignorable headers rejected so enforce rejects.
 * Idempotency stays off: the cases send one X-Request-ID many times on purpose.
 */
function everyCheck(mode: "report" | "enforce"): PolicyInput {
  const modal = CHECKS.filter((check) =>
    "mode" in check.options.shape && check.key !== "idempotency"
  );
  const defaults = Object.fromEntries(modal.map((check) => {
    const ignorable = "ignorable" in check.options.shape ? { ignorable: "reject" } : {};
    return [check.key, { mode, ...ignorable, ...OPTIONS[check.key] }];
  }));
  // The options are built from the checks' list, so their type is checked by the policy's load.
  return policy(defaults as LevelInput, { trust: { anchors: [ca.pem] } });
}

Deno.test("report mode forwards every request enforce rejects, and logs the finding", async () => {
  await using report = await rig(everyCheck("report"));
  await using enforce = await rig(everyCheck("enforce"));
  for (const [i, c] of CASES.entries()) {
    const [path, init] = c.request;
    const where = `${c.check} (${c.path})`;

    const reported = await report.call(path, init);
    assert.equal(
      reported.status,
      200,
      `${where} was not forwarded: ${JSON.stringify(reported.body)}`,
    );
    assert.equal(report.upstream.received.length, i + 1, `${where} did not reach the upstream`);
    const line = report.gateway.log.lines.at(-1)!;
    assert.equal(line.status, 200);
    assert.deepEqual(line.findings, [{
      check: c.check,
      mode: "report",
      code: c.code,
      path: c.path,
      dropped: undefined,
    }], where);

    const enforced = await enforce.call(path, init);
    assert.equal(enforced.status, c.status, `${where}: ${JSON.stringify(enforced.body)}`);
    assert.equal(enforced.code, c.code, where);
    assert.equal(enforced.path, c.path, where);
    assert.equal(
      enforce.upstream.received.length,
      0,
      `${where} reached the upstream in enforce mode`,
    );
    const rejected = enforce.gateway.log.lines.at(-1)!;
    assert.equal(rejected.status, c.status);
    assert.deepEqual(
      (rejected.findings as { check: string; mode: string }[]).map((f) => [f.check, f.mode]),
      [[c.check, "enforce"]],
      where,
    );
  }
});

Deno.test("report mode forwards a request that breaks many rules and logs every finding", async () => {
  await using report = await rig(everyCheck("report"));
  const outcome = await report.call("/v1/payments/domestic", {
    method: "POST",
    headers: {
      ...withoutIp,
      "x-request-id": "nope",
      "psu-geo-location": "GEO:1,2",
      "tpp-redirect-preferred": "yes",
      accept: "text/html",
      "x-ssl-client-cert": nginxHeader(rogue),
      authorization: "Bearer x.y.z",
    },
    body: JSON.stringify(nameless),
  });
  assert.equal(outcome.status, 200);
  assert.equal(report.upstream.received.length, 1);
  const findings = report.gateway.log.lines.at(-1)!.findings as { check: string }[];
  assert.deepEqual(findings.map((f) => f.check), [
    "request_id",
    "accept",
    "psu_ip_address",
    "psu_geo_location",
    "tpp_flags",
    "tpp_certificate",
    "bearer_token",
    "body_schema",
  ]);
});

Deno.test("every request-hardening and who-is-calling check has a case in the report-mode run", () => {
  const covered = new Set(CASES.map((c) => c.check));
  const hardening = [
    "header_limits",
    "request_id",
    "path_params",
    "query_params",
    "content_type",
    "accept",
    "psu_ip_address",
    "psu_geo_location",
    "psu_device_id",
    "psu_http_method",
    "psu_ip_port",
    "tpp_flags",
    "tpp_redirect_uri",
    "tpp_notification_content",
    "consent_id",
    "signature_pairing",
    "body_schema",
  ];
  const whoIsCalling = [
    "tpp_certificate",
    "bearer_token",
    "tpp_uris",
    "digest",
    "jws_signature",
    "http_signature",
  ];
  for (const key of [...hardening, ...whoIsCalling]) {
    assert.ok(CHECKS.some((check) => check.key === key), `${key} is not in CHECKS`);
    assert.ok(covered.has(key), `${key} has no report-mode case`);
  }
});
