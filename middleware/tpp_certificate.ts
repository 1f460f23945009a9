/**
 * `tpp_certificate`: the TPP's transport certificate (QWAC) from the header the TLS terminator
 * sets: read in the policy's form, chained to the trust anchors, not blocked, inside its dates,
 * with an organizationIdentifier (the TPP id) and the PSD2 role the operation's group needs.
 * Sets `c.var.tpp` (what rate limits, idempotency and logs key on) and `c.var.tppCertificate`.
 * The certificate header and X-Forwarded-For count only from a TLS terminator
 * (`trust.terminators`); from any other peer they are refused or stripped (`trust.from_other_peers`).
 */
import { base64Bytes } from "../src/lib/base64.ts";
import { z } from "zod";
import { defineCheck, modal } from "../src/core/check.ts";
import { dropHeader, fromTerminator, requestHeaders } from "../src/core/request.ts";
import { formatError, GatewayError } from "../src/psd2/errors.ts";
import { CLIENT_CERT_FORMS, clientCertificate, DEFAULT_HEADER } from "../src/pki/client_cert.ts";
import { trustStore } from "../src/pki/trust.ts";
import { certificateGuard, certificateUseFields } from "../src/pki/certificate_use.ts";
import { headerName } from "../src/lib/fields.ts";
import type { CertificateInfo } from "../src/pki/certificate.ts";

/** What this check keeps per request, besides the TPP's identity. */
export interface TppCertificateVariables {
  /** The TPP's transport certificate, once verified. */
  tppCertificate?: CertificateInfo;
  /** The header (lower case) that carried it: the only certificate header forwarded. */
  tppCertificateHeader?: string;
}

declare module "../src/core/check.ts" {
  interface GatewayVariables extends TppCertificateVariables {}
}

/** The DER of a stapled OCSP response sent as base64 (or RFC 9440 `:base64:`); unreadable: none. */
function stapledBytes(value: string): Uint8Array | undefined {
  const text = value.trim().replace(/^:(.*):$/, "$1");
  try {
    return base64Bytes(text);
  } catch {
    return undefined;
  }
}

export const tppCertificate = defineCheck({
  key: "tpp_certificate",
  description:
    "Verifies the TPP's transport certificate (chain, dates, blocked list, roles) and identifies the TPP",
  options: modal({
    required: z.boolean().default(false).describe(
      "Reject requests without a certificate (CERTIFICATE_MISSING); when false a request without one passes unidentified",
    ),
    form: z.enum(CLIENT_CERT_FORMS).default("nginx").describe(
      "How the TLS terminator passes the certificate: nginx (URL-encoded PEM), envoy (X-Forwarded-Client-Cert) or rfc9440 (Client-Cert)",
    ),
    header: headerName().optional().describe(
      "Header carrying the certificate; default X-SSL-Client-Cert (nginx), X-Forwarded-Client-Cert (envoy), Client-Cert (rfc9440)",
    ),
    ...certificateUseFields("transport"),
    ocsp_header: headerName().optional().describe(
      "Header in which the TLS terminator forwards an OCSP response for the client certificate (base64 DER), used instead of asking the responder when it verifies; read only from a terminator",
    ),
  }),
  create(options, { operation, sections, services }) {
    const store = trustStore(sections);
    const header = options.header ?? DEFAULT_HEADER[options.form];
    const role = { label: "TPP certificate", path: header };
    const guard = certificateGuard(options, {
      ...role,
      kind: "transport",
      check: "tpp_certificate",
    }, {
      store,
      sections,
      services,
      group: operation.group,
    });
    const staple = options.ocsp_header?.toLowerCase();
    const missing = new GatewayError(
      401,
      "CERTIFICATE_MISSING",
      `Header "${header}" must carry the TPP's certificate`,
      { path: header },
    );
    const lower = header.toLowerCase();
    const strip = sections.trust.from_other_peers === "strip";
    const notFromTerminator = new GatewayError(
      401,
      "CERTIFICATE_INVALID",
      `Header "${header}" is accepted only from the TLS terminator`,
      { path: header },
    );
    const forwardedNotFromTerminator = formatError(
      "X-Forwarded-For",
      'Header "X-Forwarded-For" is accepted only from the TLS terminator',
    );
    return async (c, next) => {
      const headers = requestHeaders(c);
      let source: string | undefined;
      let stapled: string | undefined;
      if (fromTerminator(c)) {
        source = clientCertificate(headers, options.form, header);
        if (staple) stapled = headers.get(staple) ?? undefined;
      } else if (headers.has(lower) || headers.has("x-forwarded-for")) {
        // Anyone who reaches the gateway directly could claim another TPP's certificate.
        if (!strip) throw headers.has(lower) ? notFromTerminator : forwardedNotFromTerminator;
        dropHeader(c, lower);
        dropHeader(c, "x-forwarded-for");
      }
      // A response stapled by anyone else is not believed, and not forwarded either.
      if (staple && headers.has(staple)) dropHeader(c, staple);
      if (source === undefined) {
        if (options.required) throw missing;
        return next();
      }
      // A refused certificate is logged with whom it names (the TPP learns only the code).
      const refused = (error: unknown, info?: CertificateInfo): never => {
        services.log.info({
          msg: "TPP certificate refused",
          request_id: c.get("requestId") || undefined,
          op: operation.id,
          code: error instanceof GatewayError ? error.code : undefined,
          subject: info?.cert.subject,
          organization_id: info?.organizationId,
          serial: info?.serial,
        });
        throw error;
      };
      const info = await store.certificate(source, role).catch((error) => refused(error));
      const id = await store.checkTpp(info, {
        ...role,
        group: operation.group,
        now: services.now(),
      }).catch((error) => refused(error, info));
      await guard(info, stapled === undefined ? undefined : stapledBytes(stapled)).catch((error) =>
        refused(error, info)
      );
      c.set("tppCertificate", info);
      c.set("tppCertificateHeader", lower);
      c.set("tpp", { id, roles: info.roles, domains: info.domains });
      return next();
    };
  },
});
