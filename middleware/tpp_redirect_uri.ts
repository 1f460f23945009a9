/**
 * `tpp_redirect_uri`: TPP-Redirect-URI is required when TPP-Redirect-Preferred is true (and
 * always when the policy says the bank only offers the redirect approach); TPP-Redirect-URI,
 * TPP-Nok-Redirect-URI and TPP-Notification-URI are absolute https URIs (http only where the
 * policy allows it, for a sandbox). The nok and notification URIs may be ignored by the bank, so a
 * malformed one is dropped, not rejected; a dropped notification URI is answered with
 * `ASPSP-Notification-Support: false`, as the interface describes.
 */
import { z } from "zod";
import { answerHeader, requestHeaders } from "../src/core/request.ts";
import { defineCheck, modal } from "../src/core/check.ts";
import {
  displayName,
  headerError,
  headerViolation,
  ignorableField,
  parseFlag,
  takes,
} from "./_headers.ts";

const URIS = ["tpp-redirect-uri", "tpp-nok-redirect-uri", "tpp-notification-uri"];

/** Visible ASCII only: the URL parser would silently drop tabs and trim spaces. */
const VISIBLE = /^[!-~]+$/;

/** What is wrong with a TPP URI, as the end of a sentence, or `undefined`. */
export function uriProblem(value: string, allowHttp: boolean): string | undefined {
  const schemes = allowHttp ? "an absolute https or http URI" : "an absolute https URI";
  if (!VISIBLE.test(value)) return `must be ${schemes} without spaces or non-ASCII characters`;
  // The URL parser forgives "https:///host" and "https:host"; the raw text must name the host.
  const url = /^https?:\/\/[^/?#]/i.test(value) ? URL.parse(value) : null;
  if (!url || !url.hostname) return `must be ${schemes}`;
  if (url.protocol !== "https:" && !(allowHttp && url.protocol === "http:")) {
    return `must be ${schemes}`;
  }
  if (url.username || url.password) return `must be ${schemes} without user information`;
  return undefined;
}

export const tppRedirectUri = defineCheck({
  key: "tpp_redirect_uri",
  description: "TPP-Redirect-URI when redirect is preferred; TPP URIs must be absolute https URIs",
  options: modal({
    allow_http: z.boolean().default(false).describe(
      "Accept http URIs too (for a sandbox only; production TPPs use https)",
    ),
    redirect_only: z.boolean().default(false).describe(
      "The bank offers only the redirect SCA approach: TPP-Redirect-URI is then always required",
    ),
    ignorable: ignorableField(),
  }),
  create(options, { operation, report }) {
    const uris = URIS.filter((name) => takes(operation, name));
    if (uris.length === 0) return undefined;
    const redirect = takes(operation, "tpp-redirect-uri");
    const check = { report, options };
    return (c, next) => {
      const headers = requestHeaders(c);
      if (
        redirect && !headers.has("tpp-redirect-uri") &&
        (options.redirect_only || parseFlag(headers.get("tpp-redirect-preferred")) === true)
      ) {
        throw headerError(
          "tpp-redirect-uri",
          options.redirect_only
            ? 'Header "TPP-Redirect-URI" is required: this bank offers the redirect approach only'
            : 'Header "TPP-Redirect-URI" is required when "TPP-Redirect-Preferred" is "true"',
        );
      }
      let notificationDropped = false;
      for (const name of uris) {
        const value = headers.get(name);
        if (value === null) continue;
        const problem = uriProblem(value, options.allow_http);
        if (!problem) continue;
        const error = headerError(name, `Header "${displayName(name)}" ${problem}`);
        if (headerViolation(c, check, name, error) && name === "tpp-notification-uri") {
          notificationDropped = true;
        }
      }
      if (notificationDropped) answerHeader(c, "aspsp-notification-support", "false");
      return next();
    };
  },
});
