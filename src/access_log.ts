/**
 * The access log: one JSON line per request, and the X-Request-ID echo on every response.
 * PSU identifiers and account numbers are masked; secrets and signatures never appear.
 */
import type { Middleware } from "./check.ts";
import type { Services } from "./services.ts";
import { mask, maskedPath } from "./mask.ts";

/** Longest X-Request-ID echoed back (a valid one is a 36-character UUID). */
const MAX_ECHO = 128;

/** The outermost middleware: starts the findings list, echoes the id, writes the log line. */
export function accessLog(services: Services): Middleware {
  return async (c, next) => {
    const started = performance.now();
    c.set("findings", []);
    await next();
    const headers = c.req.raw.headers;
    const id = headers.get("x-request-id");
    if (id && id.length <= MAX_ECHO) c.res.headers.set("x-request-id", id);
    const psuId = headers.get("psu-id");
    const upstream = c.var.upstream;
    services.log.info({
      time: new Date(services.now()).toISOString(),
      request_id: id && id.length <= MAX_ECHO ? id : undefined,
      op: c.var.op?.id,
      method: c.req.method,
      path: maskedPath(new URL(c.req.url).pathname, c.var.params),
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      tpp: c.var.tpp?.id,
      psu: psuId ? mask(psuId) : undefined,
      upstream_status: upstream?.status,
      upstream_ms: upstream?.ms,
      findings: c.var.findings.length > 0
        ? c.var.findings.map((f) => ({
          check: f.check,
          mode: f.mode,
          code: f.code,
          path: f.path,
          dropped: f.dropped,
        }))
        : undefined,
    });
  };
}
