/**
 * What a check asks of a certificate beyond the trust store's checks (chain, dates, blocked list,
 * roles), for its use: transport (`tpp_certificate`) or signing (`jws_signature`,
 * `http_signature`): that it is not revoked. Built once per operation; per request a cache
 * lookup.
 */
import type { PolicySections } from "../policy/sections.ts";
import type { CertificateInfo } from "./certificate.ts";
import {
  enforceRevocation,
  revocationChecker,
  type RevocationMode,
  type RevocationServices,
} from "./revocation.ts";
import type { TrustStore } from "./trust.ts";

/** A check's options about its certificates. */
export interface CertificateUseOptions {
  revocation: RevocationMode;
}

/** Where the certificate is used, for error texts, metrics and logs. */
export interface CertificateUse {
  /** For example "TPP certificate" or "signing certificate". */
  label: string;
  /** The header it came in (the error's `path`). */
  path: string;
  /** The policy key of the check. */
  check: string;
}

/** Checks one certificate that the trust store has verified; throws a GatewayError. */
export type CertificateGuard = (info: CertificateInfo, stapled?: Uint8Array) => Promise<void>;

/**
 * The guard of one use, or `undefined` when the options ask nothing (it then costs nothing per
 * request).
 */
export function certificateGuard(
  options: CertificateUseOptions,
  use: CertificateUse,
  context: { store: TrustStore; sections: PolicySections; services: RevocationServices },
): CertificateGuard | undefined {
  const { store, sections, services } = context;
  const mode = options.revocation;
  if (mode === "off") return undefined;
  const checker = revocationChecker(sections.trust.revocation, services, sections.trust.clock_skew);
  const revocationUse = { ...use, mode };
  return async (info, stapled) => {
    const issuer = store.issuerOf(info);
    const outcome = issuer
      ? await checker.check(info, issuer, stapled)
      : { kind: "unchecked" as const };
    enforceRevocation(outcome, info, revocationUse, services);
  };
}
