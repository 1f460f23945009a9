/**
 * `tpp_notification_content`: TPP-Notification-Content-Preferred has the form
 * `status=X1,...,Xn` with values from SCA, PROCESS and LAST and no repeats (a space after each
 * comma is accepted, as the interface writes it). The bank may ignore the header, so a malformed
 * one is dropped before forwarding, not rejected (policy `ignorable`).
 */
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { headerError, headerViolation, ignorableField, takes } from "./_headers.ts";
import { NOTIFICATION_CONTENT } from "../src/bodies/headers.ts";

const NAME = "tpp-notification-content-preferred";
const VALUES = new Set<string>(NOTIFICATION_CONTENT);

/** What is wrong with the header value, or `undefined`. */
export function notificationContentProblem(value: string): string | undefined {
  const shape = "must look like status=SCA,PROCESS,LAST (values from SCA, PROCESS, LAST)";
  if (!value.startsWith("status=")) return shape;
  const items = value.slice("status=".length).split(/, ?/);
  const seen = new Set<string>();
  for (const item of items) {
    if (!VALUES.has(item)) return item === "" ? shape : `${shape}; "${item}" is not one of them`;
    if (seen.has(item)) return `must not repeat "${item}"`;
    seen.add(item);
  }
  return undefined;
}

export const tppNotificationContent = defineCheck({
  key: "tpp_notification_content",
  description: "TPP-Notification-Content-Preferred must look like status=SCA,PROCESS,LAST",
  options: modal({ ignorable: ignorableField() }),
  create(options, { operation, report }) {
    if (!takes(operation, NAME)) return undefined;
    const check = { report, options };
    return (c, next) => {
      const value = requestHeaders(c).get(NAME);
      const problem = value === null ? undefined : notificationContentProblem(value);
      if (problem) {
        headerViolation(
          c,
          check,
          NAME,
          headerError(NAME, `Header "TPP-Notification-Content-Preferred" ${problem}`),
        );
      }
      return next();
    };
  },
});
