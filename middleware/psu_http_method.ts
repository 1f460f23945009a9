/** `psu_http_method`: PSU-Http-Method, wherever it is sent, is GET, POST, PUT, PATCH or DELETE. */
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { headerError, takes } from "./_headers.ts";
import { PSU_HTTP_METHODS } from "../src/bodies/headers.ts";

const METHODS = new Set<string>(PSU_HTTP_METHODS);

export const psuHttpMethod = defineCheck({
  key: "psu_http_method",
  description: "PSU-Http-Method must be one of GET, POST, PUT, PATCH, DELETE",
  options: modal({}),
  create(_options, { operation }) {
    if (!takes(operation, "psu-http-method")) return undefined;
    return (c, next) => {
      const value = requestHeaders(c).get("psu-http-method");
      if (value !== null && !METHODS.has(value)) {
        throw headerError(
          "psu-http-method",
          'Header "PSU-Http-Method" must be one of GET, POST, PUT, PATCH, DELETE',
        );
      }
      return next();
    };
  },
});
