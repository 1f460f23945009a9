/**
 * The policy sections of the who-is-calling checks: `trust` (anchors, intermediates, blocked
 * certificates, clock skew, roles per group) and `tpp_keys` (TPP signing certificates named by
 * kid or x5t#S256). Certificate files are read and checked when the policy loads.
 */
import { z } from "zod";
import { ORGANIZATION_IDENTIFIER_OID } from "./pem.ts";
import { x509 } from "./x509.ts";
import { pemList, pemSource, readPemSource } from "./pem_source.ts";
import { ROLE_NAMES, type RoleName } from "./qc_names.ts";
import { duration } from "../lib/fields.ts";
import { parseRange } from "../lib/terminators.ts";
import { revocationSection } from "./revocation_policy.ts";
import { registerSection } from "./register.ts";

const role = z.enum(ROLE_NAMES);
const roleList = (fallback: RoleName[], group: string) =>
  z.array(role).default(fallback).describe(
    `PSD2 roles a TPP certificate needs for the ${group} operations`,
  );

/** Where TPP certificates must chain to, what is blocked, and which roles each group needs. */
export const trustSection = z.object({
  anchors: pemList(
    "Trust anchors: CA certificates (the QTSPs' issuing CAs) that TPP certificates must chain to",
  ),
  intermediates: pemList(
    "Further intermediate CA certificates for building chains (a JWS x5c may bring its own)",
  ),
  blocked: z.array(
    z.object({
      sha256: z.string().regex(/^([0-9a-fA-F]{2}:?){31}[0-9a-fA-F]{2}$/).optional().describe(
        "SHA-256 fingerprint of the certificate (hex, colons allowed)",
      ),
      serial: z.string().regex(/^[0-9a-fA-F:]+$/).optional().describe(
        "Serial number of the certificate (hex)",
      ),
      issuer: z.string().min(1).optional().describe(
        "Issuer DN the serial belongs to, as RFC 4514 text; without it the serial is blocked under every issuer",
      ),
      note: z.string().optional().describe("Why the certificate is blocked, for operators"),
    }).strict().refine((b) => b.sha256 || b.serial, "give sha256 or serial"),
  ).default([]).describe("Certificates the bank has blocked (CERTIFICATE_BLOCKED)"),
  clock_skew: duration({ min: "0s", max: "1h" }).prefault("60s").describe(
    "Tolerance on certificate validity dates, for example 60s",
  ),
  roles: z.object({
    pis: roleList(["PSP_PI"], "payment"),
    ais: roleList(["PSP_AI"], "account information"),
    consents: roleList(["PSP_AI"], "consent"),
    cards: roleList(["PSP_AI"], "card account"),
    piis: roleList(["PSP_IC"], "confirmation of funds"),
    baskets: roleList(["PSP_PI", "PSP_AI"], "signing basket"),
    checkout: roleList([], "checkout"),
    installment: roleList([], "installment calculator"),
    products: roleList([], "product catalogue"),
  }).strict().prefault({}).describe(
    "PSD2 roles (any one suffices) per operation group; an empty list requires none (ROLE_INVALID otherwise)",
  ),
  cache_size: z.number().int().min(1).default(10_000).describe(
    "Parsed and verified certificates kept in memory (least recently used go first)",
  ),
  terminators: z.array(
    z.string().refine((text) => parseRange(text) !== undefined, "an IP address or CIDR"),
  ).optional().describe(
    "Addresses or CIDRs of the TLS terminators: only these peers may send the certificate header and X-Forwarded-For; unset: the loopback addresses (127.0.0.0/8, ::1)",
  ),
  from_other_peers: z.enum(["refuse", "strip"]).default("refuse").describe(
    "The certificate header or X-Forwarded-For from a peer that is not a terminator: refuse (401 CERTIFICATE_INVALID, 400 FORMAT_ERROR) or strip (ignored and not forwarded)",
  ),
  revocation: revocationSection,
  register: registerSection,
}).strict().prefault({}).transform((trust, ctx) => ({
  ...trust,
  anchors: trust.anchors.flatMap((s, i) => readPemSource(s, ctx, ["anchors", i])),
  intermediates: trust.intermediates.flatMap((s, i) => readPemSource(s, ctx, ["intermediates", i])),
})).describe("Trust in TPP certificates (transport and signing)");

/** Signing certificates of TPPs, for JWS signatures that name their key by kid or x5t#S256. */
export const tppKeysSection = z.array(
  z.object({
    tpp: z.string().min(1).describe(
      "The TPP id (organizationIdentifier of the certificate), for example PSDGE-NBG-123456",
    ),
    kid: z.string().min(1).optional().describe(
      "The key id a JWS header names in kid (x5t#S256 always works)",
    ),
    certificate: pemSource.describe("The TPP's signing certificate: a PEM file path or inline PEM"),
  }).strict(),
).default([]).transform((keys, ctx) =>
  keys.map((key, i) => {
    const [der] = readPemSource(key.certificate, ctx, [i, "certificate"]);
    if (der) {
      const id =
        new (x509().X509Certificate)(der).subjectName.getField(ORGANIZATION_IDENTIFIER_OID)[0];
      if (id !== key.tpp) {
        ctx.addIssue({
          code: "custom",
          path: [i, "tpp"],
          message: `the certificate belongs to "${
            id ?? "(no organizationIdentifier)"
          }", not "${key.tpp}"`,
        });
      }
    }
    return { tpp: key.tpp, kid: key.kid, certificate: der };
  })
).describe("TPP signing keys resolved by kid or x5t#S256 in a JWS header");

/** What src/pki/ reads of a loaded policy: its parsed `trust` and `tpp_keys` sections. */
export interface PkiSections {
  trust: z.output<typeof trustSection>;
  tpp_keys: z.output<typeof tppKeysSection>;
}
