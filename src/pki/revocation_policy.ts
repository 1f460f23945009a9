/**
 * Revocation in the policy (issue 20 item 1): the per-check option (`revocation: off | soft |
 * hard`), the `trust.revocation` section, and the answer each outcome gets under a check's mode.
 * The checking itself is src/pki/revocation.ts.
 */
import { z } from "zod";
import { GatewayError } from "../psd2/errors.ts";
import { retryAfter } from "../psd2/retry_after.ts";
import { byteSize, duration, httpUrl, TIMER_MAX } from "../lib/fields.ts";
import type { CertificateInfo } from "./certificate.ts";
import type { Logger } from "../lib/log.ts";
import type { Metrics } from "../lib/metrics.ts";

/** How a check treats revocation: not at all, or failing open or closed when no status is had. */
export const REVOCATION_MODES = ["off", "soft", "hard"] as const;
export type RevocationMode = typeof REVOCATION_MODES[number];

/** The per-check option. */
export function revocationField() {
  return z.enum(REVOCATION_MODES).default("off").describe(
    "Revocation check of the certificate (OCSP, CRL; trust.revocation says where and how long statuses are kept): off; soft: a revoked certificate is 401 CERTIFICATE_REVOKED, an unreachable responder is logged and counted and the request passes; hard: an unreachable responder is 503 with Retry-After",
  );
}

/** `trust.revocation`: where statuses come from and how long they are kept. */
export const revocationSection = z.object({
  methods: z.array(z.enum(["ocsp", "crl"])).min(1).default(["ocsp", "crl"]).describe(
    "Sources in the order tried: ocsp (the responder below, else the certificate's AIA), crl (the CRLs below of the certificate's issuer, and its distribution points); the next is tried when one is unavailable",
  ),
  ocsp_responder: httpUrl().optional().describe(
    "OCSP responder asked for every certificate instead of the one its AIA names",
  ),
  crls: z.array(z.string().min(1)).default([]).describe(
    "CRLs (http(s) URLs or file paths, DER or PEM), each used for the certificates of its issuer, before the certificates' own distribution points",
  ),
  nonce: z.boolean().default(true).describe(
    "Send a nonce in OCSP requests; an answer that echoes one must echo ours (answers without one are accepted)",
  ),
  fetch_timeout: duration({ max: TIMER_MAX }).prefault("2s").describe(
    "Deadline of one OCSP request or CRL download, for example 2s",
  ),
  refresh_interval: duration({ min: "1s", max: TIMER_MAX }).prefault("1h").describe(
    "A status (or CRL) in use is fetched again in the background after this time, or at three quarters of its time to nextUpdate if that comes first; one without nextUpdate is used at most this long",
  ),
  retry_interval: duration({ min: "1s", max: TIMER_MAX }).prefault("30s").describe(
    "After a failed fetch, the time before the next attempt; meanwhile requests do not wait (soft: pass, hard: 503 with Retry-After)",
  ),
  cache_size: z.int().min(1).default(10_000).describe(
    "Certificate statuses and CRLs kept in memory (least recently used go first)",
  ),
  crl_max_bytes: byteSize().default(16 * 1024 * 1024).describe(
    "Largest CRL downloaded, in bytes",
  ),
}).strict().prefault({}).describe(
  "Revocation checking (OCSP, CRL) for the checks whose revocation option is soft or hard",
);

/** The parsed `trust.revocation` section. */
export type RevocationConfig = z.output<typeof revocationSection>;

/** What the gateway knows of a certificate's revocation. */
export type RevocationOutcome =
  | { kind: "good"; source: string }
  | { kind: "revoked"; source: string; revokedAt?: number }
  | { kind: "unknown"; source: string }
  /** No source could give a status that can be believed; `retryAt` is the next attempt. */
  | { kind: "unavailable"; reason: string; retryAt: number }
  /** Neither the policy nor the certificate names a responder or a CRL. */
  | { kind: "unchecked" };

/** What the checker needs from the app (a part of its services). */
export interface RevocationServices {
  fetch: typeof fetch;
  /** Milliseconds since the epoch. */
  now(): number;
  log: Logger;
  metrics: Metrics;
}

/** A use of certificates whose revocation a check verifies. */
export interface RevocationUse {
  mode: Exclude<RevocationMode, "off">;
  /** For example "TPP certificate". */
  label: string;
  /** The header it came in (the error's `path`). */
  path: string;
  /** The policy key of the check, for metrics and logs. */
  check: string;
}

/**
 * The answer to a revocation outcome under a check's mode: revoked is 401 CERTIFICATE_REVOKED,
 * unknown to its responder 401 CERTIFICATE_INVALID (both in either mode); no status to be had
 * (no responder reachable, no source named) passes and is counted under `soft`, and under `hard`
 * is 503 with Retry-After (unreachable) or 401 CERTIFICATE_INVALID (no source).
 */
export function enforceRevocation(
  outcome: RevocationOutcome,
  info: CertificateInfo,
  use: RevocationUse,
  services: RevocationServices,
): void {
  const { label, path } = use;
  switch (outcome.kind) {
    case "good":
      return;
    case "revoked":
      throw new GatewayError(
        401,
        "CERTIFICATE_REVOKED",
        `The ${label} (serial ${info.serial}) is revoked${
          outcome.revokedAt ? ` since ${new Date(outcome.revokedAt).toISOString()}` : ""
        } (${outcome.source === "crl" ? "CRL" : "OCSP"})`,
        { path },
      );
    case "unknown":
      throw new GatewayError(
        401,
        "CERTIFICATE_INVALID",
        `The ${label} (serial ${info.serial}) is unknown to its issuer's OCSP responder`,
        { path },
      );
    case "unavailable":
    case "unchecked":
      if (use.mode === "soft") {
        services.metrics.revocationSoftPasses.inc({ check: use.check });
        return;
      }
      if (outcome.kind === "unchecked") {
        throw new GatewayError(
          401,
          "CERTIFICATE_INVALID",
          `The ${label} names no OCSP responder or CRL distribution point, and the policy gives none`,
          { path },
        );
      }
      throw new GatewayError(
        503,
        "UPSTREAM_UNAVAILABLE",
        `The revocation status of the ${label} cannot be had now`,
        { headers: { "retry-after": retryAfter(outcome.retryAt - services.now()) } },
      );
  }
}
