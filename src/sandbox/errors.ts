/**
 * Berlin Group error responses of the sandbox bank.
 *
 * Handlers throw a {@link SandboxError}; `renderSandboxError` is the only place that builds a
 * `tppMessages` body, so every error of the legacy core looks the same.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** A request error of the sandbox with its Berlin Group code. */
export class SandboxError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: string;
  readonly path: string;

  constructor(
    status: ContentfulStatusCode,
    code: string,
    options: { text: string; path?: string },
  ) {
    super(options.text);
    this.name = "SandboxError";
    this.status = status;
    this.code = code;
    this.path = options.path ?? "";
  }
}

/** Shorthand for the most frequent error: an unknown resource. */
export function resourceUnknown(what: string, path: string): SandboxError {
  return new SandboxError(404, "RESOURCE_UNKNOWN", { text: `${what} is unknown`, path });
}

/** Shorthand for a malformed request. */
export function formatError(text: string, path = ""): SandboxError {
  return new SandboxError(400, "FORMAT_ERROR", { text, path });
}

/** The `tppMessages` body of one error. */
export function tppMessages(code: string, options: { text: string; path?: string }) {
  return {
    tppMessages: [{ category: "ERROR", code, path: options.path ?? "", text: options.text }],
  };
}

/** Renders any error thrown by a handler; unexpected ones become a generic 500. */
export function renderSandboxError(err: Error, c: Context): Response {
  if (err instanceof SandboxError) {
    return c.json(tppMessages(err.code, { text: err.message, path: err.path }), err.status);
  }
  return c.json(tppMessages("INTERNAL_ERROR", { text: "Internal error of the core system" }), 500);
}

/** The 404 of every path the legacy core does not serve. */
export function renderNotFound(c: Context): Response {
  const text = `No resource at "${c.req.method} ${c.req.path}"`;
  return c.json(tppMessages("RESOURCE_UNKNOWN", { text, path: c.req.path }), 404);
}
