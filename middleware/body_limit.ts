/**
 * `body_limit`: reads the request body once, with a size limit (413) and an upload deadline
 * (408); a body that breaks off before it is complete, or that arrives in pieces too small to be
 * worth their cost (`min_chunk_bytes`), is 400. Every later check and the proxy use the same bytes.
 */
import { z } from "zod";
import { defineCheck, type GatewayContext } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { BodyLimitError, FREE_PIECES, readBody } from "../src/lib/body.ts";
import { formatError, GatewayError } from "../src/psd2/errors.ts";
import { byteSize, duration, TIMER_MAX } from "../src/lib/fields.ts";

export const bodyLimit = defineCheck({
  key: "body_limit",
  description: "Reads the request body once, with a size limit and an upload deadline",
  options: z.object({
    max_bytes: byteSize().default(1_048_576).describe(
      "Largest request body accepted, in bytes; larger bodies get 413 PAYLOAD_TOO_LARGE",
    ),
    read_timeout: duration({ max: TIMER_MAX }).prefault("10s").describe(
      "Time allowed to receive the whole body, for example 10s; slower uploads get 408 REQUEST_TIMEOUT",
    ),
    min_chunk_bytes: z.int().min(0).max(65_536).default(64).describe(
      `Least average size, in bytes, of the pieces a streamed body arrives in (HTTP/1.1 chunks, HTTP/2 frames; the last one aside), held from its ${
        FREE_PIECES + 1
      }th piece; a body in smaller pieces gets 400 FORMAT_ERROR. Each piece costs the gateway a callback: a megabyte in one-byte chunks took 8.5 s of CPU. 0: no bound`,
    ),
  }).strict(),
  create(options) {
    const tooLarge = new GatewayError(
      413,
      "PAYLOAD_TOO_LARGE",
      `The request body must not exceed ${options.max_bytes} bytes`,
    );
    const incomplete = formatError("body", "The request body ended before it was complete");
    const fragmented = formatError(
      "body",
      `The request body arrived in pieces of fewer than ${options.min_chunk_bytes} bytes on average; send it with Content-Length or in larger chunks`,
    );
    async function read(c: GatewayContext, next: () => Promise<void>) {
      try {
        c.set(
          "body",
          await readBody(c.req.raw, {
            maxBytes: options.max_bytes,
            timeoutMs: options.read_timeout,
            minPieceBytes: options.min_chunk_bytes,
          }),
        );
      } catch (error) {
        // Anything else is the client's stream breaking off: the connection closed before the
        // declared length, or broken chunked framing. The client's fault, not a 500.
        if (!(error instanceof BodyLimitError)) throw incomplete;
        if (error.reason === "too_large") throw tooLarge;
        if (error.reason === "fragmented") throw fragmented;
        throw new GatewayError(408, "REQUEST_TIMEOUT", "The request body was not received in time");
      }
      return next();
    }
    // A request without a body is passed on at once (no async step of its own).
    return (c, next) => {
      const headers = requestHeaders(c);
      return headers.has("content-length") || headers.has("transfer-encoding")
        ? read(c, next)
        : next();
    };
  },
});
