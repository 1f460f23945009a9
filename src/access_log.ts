/**
 * The outermost middleware: starts the findings list, echoes X-Request-ID on every response, and
 * records each request once: one JSON access-log line, the metrics, the trace span's attributes.
 * PSU identifiers and account numbers are masked; secrets, tokens and signatures never appear.
 */
import type { GatewayContext, Middleware } from "./check.ts";
import type { Services } from "./services.ts";
import { mask, maskedPath } from "./mask.ts";
import { annotateSpan } from "./tracing.ts";

/** Longest X-Request-ID echoed back (a valid one is a 36-character UUID). */
const MAX_ECHO = 128;

function logLine(c: GatewayContext, services: Services, ms: number, requestId?: string) {
  const op = c.get("op");
  const psuId = c.req.raw.headers.get("psu-id");
  const upstream = c.get("upstream");
  const findings = c.get("findings");
  return {
    level: "info",
    time: new Date(services.now()).toISOString(),
    request_id: requestId,
    op: op?.id,
    method: c.req.method,
    path: op?.sensitive ? maskedPath(c.req.path, op.path, c.get("params")) : c.req.path,
    status: c.res.status,
    ms,
    tpp: c.get("tpp")?.id,
    psu: psuId ? mask(psuId) : undefined,
    upstream_status: upstream?.status,
    upstream_ms: upstream?.ms,
    findings: findings.length > 0
      ? findings.map((f) => ({
        check: f.check,
        mode: f.mode,
        code: f.code,
        path: f.path,
        dropped: f.dropped,
      }))
      : undefined,
  };
}

function count(c: GatewayContext, services: Services, seconds: number) {
  const metrics = services.metrics;
  const op = c.get("op")?.id ?? "none";
  metrics.requests.inc({ op, status: String(c.res.status) });
  metrics.requestSeconds.observe({ op }, seconds);
  const upstream = c.get("upstream");
  if (upstream) metrics.upstreamSeconds.observe({ op }, upstream.ms / 1000);
  for (const f of c.get("findings")) {
    (f.mode === "report" ? metrics.reported : metrics.rejections).inc({
      check: f.check,
      code: f.code,
    });
  }
}

/** Records every request: log line, metrics, span. */
export function accessLog(services: Services): Middleware {
  return async (c, next) => {
    const started = performance.now();
    c.set("findings", []);
    await next();
    const header = c.req.raw.headers.get("x-request-id");
    const requestId = header && header.length <= MAX_ECHO ? header : undefined;
    if (requestId) c.res.headers.set("x-request-id", requestId);
    const ms = Math.round((performance.now() - started) * 10) / 10;
    services.log.info(logLine(c, services, ms, requestId));
    count(c, services, ms / 1000);
    annotateSpan({
      method: c.req.method,
      route: c.get("op")?.path,
      operation: c.get("op")?.id,
      requestId,
      tpp: c.get("tpp")?.id,
      status: c.res.status,
    });
  };
}
