/**
 * `tpp_uris`: TPP URIs must lie in the domains of the TPP's website certificate (CN or
 * SubjectAltName, wildcards considered), as the interface asks of TPP-Notification-URI. A
 * notification URI outside them is not forwarded and the answer says
 * `ASPSP-Notification-Support: false` (the document's choice); redirect URIs outside them are
 * reported or rejected (400 FORMAT_ERROR) as the policy says. Without a verified transport
 * certificate there are no domains to judge by, and the check does nothing.
 */
import { z } from "zod";
import { answerHeader, requestHeaders } from "../src/core/request.ts";
import { defineCheck, modal } from "../src/core/check.ts";
import { formatError } from "../src/psd2/errors.ts";
import { dropHeader } from "../src/core/request.ts";
import { hostInDomains, uriHost } from "../src/pki/domains.ts";
import type {} from "./tpp_certificate.ts"; // tppCertificate

const REDIRECT_HEADERS = [
  ["tpp-redirect-uri", "TPP-Redirect-URI"],
  ["tpp-nok-redirect-uri", "TPP-Nok-Redirect-URI"],
] as const;

export const tppUris = defineCheck({
  key: "tpp_uris",
  description:
    "Keeps TPP notification and redirect URIs inside the domains of the TPP's certificate",
  options: modal({
    notification: z.enum(["strip", "forward"]).default("strip").describe(
      "A TPP-Notification-URI outside the certificate's domains: strip (not forwarded, answer ASPSP-Notification-Support: false) or forward",
    ),
    redirect: z.enum(["warn", "reject"]).default("warn").describe(
      "A redirect URI outside the certificate's domains: warn (log a finding, forward) or reject (400 FORMAT_ERROR)",
    ),
  }),
  create(options, { operation, report }) {
    const notification = operation.headers.includes("tpp-notification-uri") &&
      options.notification === "strip";
    const redirects = REDIRECT_HEADERS.filter(([name]) => operation.headers.includes(name));
    if (!notification && redirects.length === 0) return undefined;
    const enforce = options.mode === "enforce";
    return (c, next) => {
      const domains = c.get("tppCertificate")?.domains;
      if (!domains) return next();
      const headers = requestHeaders(c);
      const outside = (display: string) =>
        formatError(
          display,
          `Header "${display}" must point into the domains of the TPP's certificate (${
            domains.join(", ") || "none"
          })`,
        );
      for (const [name, display] of redirects) {
        const uri = headers.get(name);
        if (uri === null || hostInDomains(uriHost(uri) ?? "", domains)) continue;
        if (options.redirect === "reject") throw outside(display);
        report(c, outside(display));
      }
      const uri = notification ? headers.get("tpp-notification-uri") : null;
      const outsideNotification = uri !== null && !hostInDomains(uriHost(uri) ?? "", domains);
      if (outsideNotification) {
        report(c, outside("TPP-Notification-URI"), { dropped: enforce });
        if (enforce) dropHeader(c, "tpp-notification-uri");
      }
      if (outsideNotification && enforce) answerHeader(c, "aspsp-notification-support", "false");
      return next();
    };
  },
});
