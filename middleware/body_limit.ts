/**
 * `body_limit`: reads the request body once, with a size limit (413) and an upload deadline
 * (408); every later check and the proxy use the same bytes.
 */
import { z } from "zod";
import { defineCheck } from "../src/check.ts";
import { BodyLimitError, readBody } from "../src/body.ts";
import { GatewayError } from "../src/errors.ts";

export const bodyLimit = defineCheck({
  key: "body_limit",
  description: "Reads the request body once, with a size limit and an upload deadline",
  options: z.object({
    max_bytes: z.number().int().positive().default(1_048_576).describe(
      "Largest request body accepted, in bytes; larger bodies get 413 PAYLOAD_TOO_LARGE",
    ),
    read_timeout_ms: z.number().int().positive().default(10_000).describe(
      "Time allowed to receive the whole body; slower uploads get 408 REQUEST_TIMEOUT",
    ),
  }).strict(),
  create(options) {
    const tooLarge = new GatewayError(
      413,
      "PAYLOAD_TOO_LARGE",
      `The request body must not exceed ${options.max_bytes} bytes`,
    );
    return async (c, next) => {
      const request = c.req.raw;
      const headers = request.headers;
      if (headers.has("content-length") || headers.has("transfer-encoding")) {
        try {
          c.set(
            "body",
            await readBody(request, {
              maxBytes: options.max_bytes,
              timeoutMs: options.read_timeout_ms,
            }),
          );
        } catch (error) {
          if (!(error instanceof BodyLimitError)) throw error;
          if (error.reason === "too_large") throw tooLarge;
          throw new GatewayError(
            408,
            "REQUEST_TIMEOUT",
            "The request body was not received in time",
          );
        }
      }
      await next();
    };
  },
});
