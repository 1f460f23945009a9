/**
 * `deprecation`: marks the responses of operations the documents deprecate (the checkout order
 * and the installment calculator) with `Deprecation` (RFC 9745) and, when set, `Sunset`
 * (RFC 8594) and a `Link` to the migration notes.
 */
import { z } from "zod";
import { answerHeader } from "../src/core/request.ts";
import { defineCheck } from "../src/core/check.ts";

const date = z.iso.date();

export const deprecation = defineCheck({
  key: "deprecation",
  description: "Adds Deprecation (and Sunset, Link) headers to deprecated operations",
  options: z.object({
    since: date.optional().describe(
      "Date the operation was deprecated (Deprecation: @<epoch>); without it Deprecation: true",
    ),
    sunset: date.optional().describe("Date after which the operation will be removed (Sunset)"),
    link: z.url().optional().describe(
      "Where TPPs read about the replacement (Link rel=deprecation)",
    ),
  }).strict(),
  validate(options) {
    return options.since && options.sunset && options.sunset < options.since
      ? [`sunset "${options.sunset}" is before since "${options.since}"`]
      : [];
  },
  create(options, { operation }) {
    if (!operation.deprecated) return undefined;
    const headers: [string, string][] = [[
      "deprecation",
      options.since ? `@${Date.parse(options.since) / 1000}` : "true",
    ]];
    if (options.sunset) headers.push(["sunset", new Date(options.sunset).toUTCString()]);
    if (options.link) headers.push(["link", `<${options.link}>; rel="deprecation"`]);
    return (c, next) => {
      for (const [name, value] of headers) answerHeader(c, name, value);
      return next();
    };
  },
});
