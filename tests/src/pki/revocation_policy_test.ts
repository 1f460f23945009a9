import assert from "node:assert/strict";
import { GatewayError } from "../../../src/psd2/errors.ts";
import { parseCertificate } from "../../../src/pki/certificate.ts";
import {
  enforceRevocation,
  revocationField,
  type RevocationOutcome,
  revocationSection,
  type RevocationUse,
} from "../../../src/pki/revocation_policy.ts";
import { createMetrics } from "../../../src/lib/metrics.ts";
import { memoryLogger } from "../../../src/lib/log.ts";
import { createCa, issue } from "../../support/pki.ts";

const ca = await createCa();
const info = await parseCertificate((await issue(ca, { keyType: "EC" })).pem);
const NOW = Date.parse("2026-11-26T08:00:00.000Z");

function use(mode: RevocationUse["mode"]): RevocationUse {
  return { mode, label: "TPP certificate", path: "X-SSL-Client-Cert", check: "tpp_certificate" };
}

function services() {
  return { fetch: globalThis.fetch, now: () => NOW, log: memoryLogger(), metrics: createMetrics() };
}

/** The error `enforceRevocation` throws for `outcome`, or undefined when it lets it pass. */
function verdict(
  outcome: RevocationOutcome,
  mode: RevocationUse["mode"],
  on = services(),
): GatewayError | undefined {
  try {
    enforceRevocation(outcome, info, use(mode), on);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof GatewayError, String(error));
    return error;
  }
}

Deno.test("enforceRevocation() lets a good status pass in either mode, uncounted", () => {
  for (const mode of ["soft", "hard"] as const) {
    const on = services();
    assert.equal(verdict({ kind: "good", source: "ocsp" }, mode, on), undefined);
    assert.equal(on.metrics.revocationSoftPasses.value({ check: "tpp_certificate" }), 0);
  }
});

Deno.test("enforceRevocation() answers a revoked certificate 401 CERTIFICATE_REVOKED in either mode, naming the serial, the date and the source", () => {
  for (const mode of ["soft", "hard"] as const) {
    const crl = verdict({ kind: "revoked", source: "crl", revokedAt: NOW - 3_600_000 }, mode);
    assert.equal(crl?.status, 401);
    assert.equal(crl?.code, "CERTIFICATE_REVOKED");
    assert.equal(crl?.path, "X-SSL-Client-Cert");
    assert.equal(
      crl?.message,
      `The TPP certificate (serial ${info.serial}) is revoked since 2026-11-26T07:00:00.000Z (CRL)`,
    );
    const ocsp = verdict({ kind: "revoked", source: "ocsp" }, mode);
    assert.equal(ocsp?.code, "CERTIFICATE_REVOKED");
    assert.equal(ocsp?.message, `The TPP certificate (serial ${info.serial}) is revoked (OCSP)`);
    const stapled = verdict({ kind: "revoked", source: "stapled" }, mode);
    assert.equal(stapled?.message, `The TPP certificate (serial ${info.serial}) is revoked (OCSP)`);
  }
});

Deno.test("enforceRevocation() answers a certificate unknown to its responder 401 CERTIFICATE_INVALID in either mode", () => {
  for (const mode of ["soft", "hard"] as const) {
    const on = services();
    const error = verdict({ kind: "unknown", source: "ocsp" }, mode, on);
    assert.equal(error?.status, 401);
    assert.equal(error?.code, "CERTIFICATE_INVALID");
    assert.equal(error?.path, "X-SSL-Client-Cert");
    assert.equal(
      error?.message,
      `The TPP certificate (serial ${info.serial}) is unknown to its issuer's OCSP responder`,
    );
    assert.equal(on.metrics.revocationSoftPasses.value({ check: "tpp_certificate" }), 0);
  }
});

Deno.test("enforceRevocation() under soft lets an unavailable or unchecked status pass, counted per check", () => {
  const on = services();
  const unavailable: RevocationOutcome = { kind: "unavailable", reason: "down", retryAt: NOW };
  assert.equal(verdict(unavailable, "soft", on), undefined);
  assert.equal(verdict({ kind: "unchecked" }, "soft", on), undefined);
  assert.equal(on.metrics.revocationSoftPasses.value({ check: "tpp_certificate" }), 2);
  assert.equal(on.metrics.revocationSoftPasses.value(), 0);
});

Deno.test("enforceRevocation() under hard answers an unreachable source 503 with Retry-After until the next attempt", () => {
  const on = services();
  const error = verdict(
    { kind: "unavailable", reason: "down", retryAt: NOW + 7_500 },
    "hard",
    on,
  );
  assert.equal(error?.status, 503);
  assert.equal(error?.code, "UPSTREAM_UNAVAILABLE");
  assert.equal(error?.message, "The revocation status of the TPP certificate cannot be had now");
  assert.deepEqual(error?.headers, { "retry-after": "8" });
  assert.equal(error?.path, undefined);
  assert.equal(on.metrics.revocationSoftPasses.value({ check: "tpp_certificate" }), 0);
});

Deno.test("enforceRevocation() under hard answers a certificate without any source 401 CERTIFICATE_INVALID", () => {
  const on = services();
  const error = verdict({ kind: "unchecked" }, "hard", on);
  assert.equal(error?.status, 401);
  assert.equal(error?.code, "CERTIFICATE_INVALID");
  assert.equal(error?.path, "X-SSL-Client-Cert");
  assert.equal(
    error?.message,
    "The TPP certificate names no OCSP responder or CRL distribution point, and the policy gives none",
  );
  assert.equal(error?.headers, undefined);
  assert.equal(on.metrics.revocationSoftPasses.value({ check: "tpp_certificate" }), 0);
});

Deno.test("revocationSection keeps its timers within their bounds", () => {
  const parsed = revocationSection.parse({});
  assert.equal(parsed.fetch_timeout, 2_000);
  assert.equal(parsed.refresh_interval, 3_600_000);
  assert.equal(parsed.retry_interval, 30_000);
  assert.equal(revocationSection.parse({ fetch_timeout: "1ms" }).fetch_timeout, 1);
  assert.equal(revocationSection.parse({ refresh_interval: "1s" }).refresh_interval, 1_000);
  assert.equal(revocationSection.parse({ retry_interval: "24d" }).retry_interval, 24 * 86_400_000);
  const refused = (field: string, value: string, text: RegExp) => {
    const result = revocationSection.safeParse({ [field]: value });
    assert.equal(result.success, false, `${field}: ${value}`);
    assert.match(result.error!.issues[0].message, text);
    assert.deepEqual(result.error!.issues[0].path, [field]);
  };
  refused("fetch_timeout", "25d", /at most 24d/);
  refused("refresh_interval", "999ms", /at least 1s/);
  refused("refresh_interval", "25d", /at most 24d/);
  refused("retry_interval", "999ms", /at least 1s/);
  refused("retry_interval", "25d", /at most 24d/);
});

Deno.test("revocationSection defaults to OCSP then CRL, a nonce, and bounded caches", () => {
  assert.deepEqual(revocationSection.parse({}), {
    methods: ["ocsp", "crl"],
    crls: [],
    nonce: true,
    fetch_timeout: 2_000,
    refresh_interval: 3_600_000,
    retry_interval: 30_000,
    cache_size: 10_000,
    crl_max_bytes: 16 * 1024 * 1024,
  });
  const set = revocationSection.parse({
    methods: ["crl"],
    crls: ["/etc/xs2a/ca.crl", "https://crl.example/ca.crl"],
    nonce: false,
    cache_size: 1,
  });
  assert.deepEqual(set.methods, ["crl"]);
  assert.deepEqual(set.crls, ["/etc/xs2a/ca.crl", "https://crl.example/ca.crl"]);
  assert.equal(set.nonce, false);
  assert.equal(set.cache_size, 1);
  assert.deepEqual(revocationSection.parse({ methods: ["crl", "ocsp"] }).methods, ["crl", "ocsp"]);
  for (
    const wrong of [
      { methods: [] },
      { methods: ["ldap"] },
      { crls: [""] },
      { cache_size: 0 },
      { cache_size: 1.5 },
      { ocsp_responder: "ldap://ocsp.example" },
      { unknown: true },
    ]
  ) {
    assert.equal(revocationSection.safeParse(wrong).success, false, JSON.stringify(wrong));
  }
});

Deno.test("revocationField() is off unless a check says soft or hard", () => {
  const field = revocationField();
  assert.equal(field.parse(undefined), "off");
  for (const mode of ["off", "soft", "hard"]) assert.equal(field.parse(mode), mode);
  assert.equal(field.safeParse("").success, false);
  assert.equal(field.safeParse("strict").success, false);
  assert.match(field.description ?? "", /^Revocation check of the certificate/);
});
