/**
 * `tpp_flags`: the boolean preference headers TPP-Redirect-Preferred, TPP-Decoupled-Preferred,
 * TPP-Explicit-Authorisation-Preferred and TPP-Rejection-NoFunds-Preferred are `true` or `false`
 * (any letter case: `parseFlag`, the one reading every check uses).
 * Both redirect and decoupled preferred is not an error (the interface says so). The last three
 * may be ignored by the bank, so a malformed one is dropped, not rejected (policy `ignorable`).
 */
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import {
  displayName,
  headerError,
  headerViolation,
  ignorableField,
  parseFlag,
  takes,
} from "./_headers.ts";

const FLAGS = [
  "tpp-redirect-preferred",
  "tpp-decoupled-preferred",
  "tpp-explicit-authorisation-preferred",
  "tpp-rejection-nofunds-preferred",
];

export const tppFlags = defineCheck({
  key: "tpp_flags",
  description: "The TPP-*-Preferred headers must be true or false",
  options: modal({ ignorable: ignorableField() }),
  create(options, { operation, report }) {
    const flags = FLAGS.filter((name) => takes(operation, name));
    if (flags.length === 0) return undefined;
    const check = { report, options };
    return (c, next) => {
      const headers = requestHeaders(c);
      for (const name of flags) {
        const value = headers.get(name);
        if (value === null || parseFlag(value) !== undefined) continue;
        headerViolation(
          c,
          check,
          name,
          headerError(
            name,
            `Header "${displayName(name)}" must be "true" or "false", not ${
              JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)
            }`,
          ),
        );
      }
      return next();
    };
  },
});
