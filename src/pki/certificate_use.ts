/**
 * What a check asks of a certificate beyond the trust store's checks (chain, dates, blocked list,
 * roles), for its use: transport (`tpp_certificate`) or signing (`jws_signature`,
 * `http_signature`): the QC type its QC statements declare (QWAC, QSealC), its (extended) key
 * usage, that its TPP is in the TPP register with the group's service, and that it is not
 * revoked. Built once per operation; per request a few comparisons and
 * a cache lookup.
 */
import { z } from "zod";
import { GatewayError } from "../psd2/errors.ts";
import type { CertificateInfo } from "./certificate.ts";
import { QC_TYPE_LABELS, QC_TYPE_NAMES, type QcTypeName } from "./qc_names.ts";
import type { RevocationChecker } from "./revocation.ts";
import type { PkiSections } from "./sections.ts";
import {
  enforceRevocation,
  revocationField,
  type RevocationMode,
  type RevocationServices,
} from "./revocation_policy.ts";
import type { TrustStore } from "./trust.ts";
import { type RegisterServices, tppRegister } from "./register.ts";
import type { Group } from "../psd2/catalogue.ts";

/** What a certificate is used for. */
export type CertificateKind = "transport" | "signing";

/** OID of the clientAuth extended key usage. */
const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
/** Key usage bits (RFC 5280 order as @peculiar/x509 numbers them). */
const DIGITAL_SIGNATURE = 1;
const NON_REPUDIATION = 2;

/** The options of a check about its certificates (spread into its options schema). */
export function certificateUseFields(kind: CertificateKind) {
  const transport = kind === "transport";
  return {
    types: z.array(z.enum(QC_TYPE_NAMES)).min(1).default(
      transport ? ["QWAC"] : ["QSealC", "QWAC"],
    ).describe(
      transport
        ? "QC types (ETSI EN 319 412-5 QcType) the transport certificate may declare: QWAC (id-etsi-qct-web), QSealC (id-etsi-qct-eseal), QESig; another type is 401 CERTIFICATE_INVALID"
        : "QC types (ETSI EN 319 412-5 QcType) the signing certificate may declare: QSealC (id-etsi-qct-eseal), QWAC (id-etsi-qct-web), QESig; another type is 401 CERTIFICATE_INVALID",
    ),
    require_type: z.boolean().default(false).describe(
      "Refuse a certificate that declares no QC type (401 CERTIFICATE_INVALID); when false only a declared type is compared with types",
    ),
    require_key_usage: z.boolean().default(false).describe(
      transport
        ? "Require the extended key usage clientAuth (401 CERTIFICATE_INVALID otherwise)"
        : "Require the key usage digitalSignature or nonRepudiation (401 CERTIFICATE_INVALID otherwise)",
    ),
    revocation: revocationField(),
  };
}

/** A check's options about its certificates. */
export interface CertificateUseOptions {
  types: QcTypeName[];
  require_type: boolean;
  require_key_usage: boolean;
  revocation: RevocationMode;
}

/** Where the certificate is used, for error texts, metrics and logs. */
export interface CertificateUse {
  kind: CertificateKind;
  /** For example "TPP certificate" or "signing certificate". */
  label: string;
  /** The header it came in (the error's `path`). */
  path: string;
  /** The policy key of the check. */
  check: string;
}

/** Checks one certificate that the trust store has verified; throws a GatewayError. */
export type CertificateGuard = (info: CertificateInfo, stapled?: Uint8Array) => Promise<void>;

/** The checks of one use on a certificate the trust store verified. */
export function certificateGuard(
  options: CertificateUseOptions,
  use: CertificateUse,
  context: {
    store: TrustStore;
    sections: PkiSections;
    services: RevocationServices & RegisterServices;
    group: Group;
  },
): CertificateGuard {
  const { store, sections, services, group } = context;
  const register = sections.trust.register && sections.trust.register.services[group].length > 0
    ? tppRegister(sections.trust.register, services)
    : undefined;
  const mode = options.revocation;
  // The revocation machinery (OCSP, CRLs: ASN.1 libraries) loads with its first certificate.
  let checker: Promise<RevocationChecker> | undefined;
  const revocation = () =>
    checker ??= import("./revocation.ts").then(({ revocationChecker }) =>
      revocationChecker(sections.trust.revocation, services, sections.trust.clock_skew)
    );
  const revocationUse = mode === "off" ? undefined : { ...use, mode };
  return async (info, stapled) => {
    checkType(info, options, use);
    if (options.require_key_usage) checkKeyUsage(info, use);
    if (register && info.organizationId) {
      await register.check(info.organizationId, group, use.path);
    }
    if (!revocationUse) return;
    const issuer = store.issuerOf(info);
    const outcome = issuer
      ? await (await revocation()).check(info, issuer, stapled)
      : { kind: "unchecked" as const };
    enforceRevocation(outcome, info, revocationUse, services);
  };
}

function invalid(use: CertificateUse, text: string): GatewayError {
  return new GatewayError(401, "CERTIFICATE_INVALID", text, { path: use.path });
}

/** The QC type the certificate declares must be one the use accepts. */
function checkType(info: CertificateInfo, options: CertificateUseOptions, use: CertificateUse) {
  const declared = info.qcTypes;
  const accepted = options.types.join(" or ");
  if (declared === undefined || declared.length === 0) {
    if (!options.require_type) return;
    throw invalid(
      use,
      `The ${use.label} declares no QC type (QcType statement 0.4.0.1862.1.6); this operation accepts ${accepted}`,
    );
  }
  if (declared.some((type) => options.types.includes(type))) return;
  const named = declared.map((type) => `${type} (${QC_TYPE_LABELS[type]})`).join(", ");
  throw invalid(use, `The ${use.label} is a ${named}; this operation accepts ${accepted}`);
}

/** Transport: extended key usage clientAuth; signing: digitalSignature or nonRepudiation. */
function checkKeyUsage(info: CertificateInfo, use: CertificateUse) {
  if (use.kind === "transport") {
    if (info.extendedKeyUsages?.includes(CLIENT_AUTH)) return;
    throw invalid(use, `The ${use.label}'s extended key usage must include clientAuth`);
  }
  const bits = info.keyUsage ?? 0;
  if (bits & (DIGITAL_SIGNATURE | NON_REPUDIATION)) return;
  throw invalid(
    use,
    `The ${use.label}'s key usage must include digitalSignature or nonRepudiation`,
  );
}
