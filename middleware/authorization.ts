/**
 * `authorization`: the Authorization header is present where the interface requires it (the
 * checkout order and the installment calculator, document 001), whatever mode `bearer_token` is
 * in: with token verification off, a call without it was forwarded. Missing: 401 TOKEN_UNKNOWN
 * with a `WWW-Authenticate` challenge, the answer `bearer_token` gives.
 */
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { GatewayError } from "../src/psd2/errors.ts";
import { requires } from "./_headers.ts";

export const authorization = defineCheck({
  key: "authorization",
  description:
    "Authorization is present where the interface requires it, whatever bearer_token's mode",
  options: modal({}),
  create(_options, { operation }) {
    if (!requires(operation, "authorization")) return undefined;
    const missing = new GatewayError(
      401,
      "TOKEN_UNKNOWN",
      'Header "Authorization" is required for this operation',
      { path: "Authorization", headers: { "www-authenticate": 'Bearer realm="xs2a-edge"' } },
    );
    return (c, next) => {
      if (!requestHeaders(c).get("authorization")?.trim()) throw missing;
      return next();
    };
  },
});
