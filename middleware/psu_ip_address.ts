/**
 * `psu_ip_address`: PSU-IP-Address is required on payment initiation and consent creation and,
 * wherever it is sent, an IPv4 or IPv6 address (the standard allows both; a policy may hold it to
 * IPv4, the document's type); with `public_only`,
 * a public one. On account reads its presence means the PSU initiated the read:
 * `c.var.psuInitiated` is true only for a present and valid address (a refused one, even in
 * report mode, leaves the read TPP-initiated), which is what the consent frequency count relies on.
 */
import { z } from "zod";
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { headerError, missingHeader, requires, takes } from "./_headers.ts";
import { isIpv4, isIpv6, specialRange } from "../src/lib/ip.ts";

export const psuIpAddress = defineCheck({
  key: "psu_ip_address",
  description: "PSU-IP-Address is required where the interface says so and is an IP address",
  options: modal({
    allow_ipv6: z.boolean().default(true).describe(
      "Accept IPv6 addresses too, as the standard does; false holds the header to IPv4 (the document's type)",
    ),
    public_only: z.boolean().default(false).describe(
      "Refuse addresses in loopback, private, shared, link-local, documentation, multicast or other reserved ranges (400 FORMAT_ERROR): they are never the PSU's address as the TPP saw it, and on an account read they would make a TPP-initiated read look PSU-initiated (not counted against frequencyPerDay)",
    ),
  }),
  create(options, { operation }) {
    const required = requires(operation, "psu-ip-address");
    if (!required && !takes(operation, "psu-ip-address")) return undefined;
    const expected = options.allow_ipv6 ? "an IPv4 or IPv6 address" : "an IPv4 address";
    return (c, next) => {
      const value = requestHeaders(c).get("psu-ip-address");
      if (value === null) {
        c.set("psuInitiated", false);
        if (required) throw missingHeader("psu-ip-address", c);
        return next();
      }
      const valid = isIpv4(value) || (options.allow_ipv6 && isIpv6(value));
      const range = valid && options.public_only ? specialRange(value) : undefined;
      c.set("psuInitiated", valid && range === undefined);
      if (!valid) {
        throw headerError(
          "psu-ip-address",
          `Header "PSU-IP-Address" must be ${expected}, like 192.168.8.78`,
        );
      }
      if (range) {
        throw headerError(
          "psu-ip-address",
          `Header "PSU-IP-Address" must be the PSU's public address; "${value}" is in a ${range} range`,
        );
      }
      return next();
    };
  },
});
