/**
 * Around every handler of the interface's paths: starts the findings list, echoes X-Request-ID on
 * every response, and records each request once: one JSON access-log line, the metrics, the trace
 * span's attributes. PSU identifiers are masked (or pseudonymised: `access_log.psu_id: hmac`),
 * account numbers masked; secrets, tokens and signatures never appear.
 */
import { createHmac } from "node:crypto";
import { answerHeader, requestHeaders } from "../core/request.ts";
import { type GatewayContext } from "../core/check.ts";
import type { ErrorResponder } from "../core/chain.ts";
import type { Services } from "../core/services.ts";
import type { CounterCell, HistogramSeries } from "../lib/metrics.ts";
import { mask, maskedPath } from "../lib/mask.ts";
import { annotateSpan, TRACING } from "../lib/tracing.ts";
import type { PolicySections } from "../policy/sections.ts";

/** Longest X-Request-ID echoed back (a valid one is a 36-character UUID). */
const MAX_ECHO = 128;

/** The metric series of one operation, looked up once instead of by labels per request. */
interface OperationSeries {
  requestSeconds: HistogramSeries;
  upstreamSeconds: HistogramSeries;
  byStatus: Map<number, CounterCell>;
}

/** `Date.toISOString()` of the current millisecond, formatted once per millisecond. */
function isoClock(now: () => number): () => string {
  let last = NaN;
  let text = "";
  return () => {
    const ms = now();
    if (ms !== last) {
      last = ms;
      text = new Date(ms).toISOString();
    }
    return text;
  };
}

/** What the log shows of a PSU-ID: masked, or a keyed pseudonym (`access_log.psu_id`). */
function psuShown(options?: PolicySections["access_log"]): (psuId: string) => string {
  const key = options?.hmac_key;
  if (options?.psu_id !== "hmac" || !key) return mask;
  return (psuId) => `hmac:${createHmac("sha256", key).update(psuId).digest("hex").slice(0, 32)}`;
}

function logLine(
  c: GatewayContext,
  time: string,
  ms: number,
  requestId: string | undefined,
  psu: (psuId: string) => string,
) {
  const op = c.get("op");
  const psuId = requestHeaders(c).get("psu-id");
  const upstream = c.get("upstream");
  const findings = c.get("findings");
  return {
    level: "info",
    time,
    request_id: requestId,
    op: op?.id,
    method: c.req.method,
    path: op?.sensitive ? maskedPath(c.req.path, op.path, c.get("params")) : c.req.path,
    status: c.res.status,
    ms,
    tpp: c.get("tpp")?.id,
    psu: psuId ? psu(psuId) : undefined,
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

/** A handler that answers a request by itself (it has no `next`). */
export type Answering = (c: GatewayContext) => Response | Promise<Response>;

/**
 * Wraps each of the app's handlers so that it records every request: log line, metrics, span.
 * A wrapper rather than a `*` middleware: Hono then runs a route's one handler without composing
 * a middleware chain per request.
 */
export function accessLog(
  services: Services,
  respond: ErrorResponder,
  options?: PolicySections["access_log"],
): (handler: Answering) => (c: GatewayContext) => Promise<Response> {
  const metrics = services.metrics;
  const psu = psuShown(options);
  const clock = isoClock(services.now);
  const byOperation = new Map<string, OperationSeries>();
  function seriesOf(op: string): OperationSeries {
    let series = byOperation.get(op);
    if (!series) {
      series = {
        requestSeconds: metrics.requestSeconds.series({ op }),
        upstreamSeconds: metrics.upstreamSeconds.series({ op }),
        byStatus: new Map(),
      };
      byOperation.set(op, series);
    }
    return series;
  }
  function count(c: GatewayContext, seconds: number) {
    const op = c.get("op")?.id ?? "none";
    const series = seriesOf(op);
    const status = c.res.status;
    let requests = series.byStatus.get(status);
    if (!requests) {
      requests = metrics.requests.cell({ op, status: String(status) });
      series.byStatus.set(status, requests);
    }
    requests.value++;
    series.requestSeconds.observe(seconds);
    const upstream = c.get("upstream");
    if (upstream) series.upstreamSeconds.observe(upstream.ms / 1000);
    for (const f of c.get("findings")) {
      (f.mode === "report" ? metrics.reported : metrics.rejections).inc({
        check: f.check,
        code: f.code,
      });
    }
  }

  return (handler) => async (c) => {
    const started = performance.now();
    c.set("findings", []);
    const header = requestHeaders(c).get("x-request-id");
    const requestId = header && header.length <= MAX_ECHO ? header : undefined;
    if (requestId) answerHeader(c, "x-request-id", requestId);
    let response: Response;
    try {
      response = await handler(c);
    } catch (error) {
      response = respond(error, c);
    }
    // An operation's handler answers `c.res`, which its chain set; reading `c.res` before it is
    // set would make Hono build an empty response.
    if (!c.finalized || c.res !== response) c.res = response;
    const answer = c.get("answerHeaders");
    if (answer && c.res !== c.get("proxied")) {
      for (const [name, value] of answer) c.res.headers.set(name, value);
    }
    const ms = Math.round((performance.now() - started) * 10) / 10;
    services.log.info(logLine(c, clock(), ms, requestId, psu));
    count(c, ms / 1000);
    if (TRACING) {
      annotateSpan({
        method: c.req.method,
        route: c.get("op")?.path,
        operation: c.get("op")?.id,
        requestId,
        tpp: c.get("tpp")?.id,
        status: c.res.status,
      });
    }
    return c.res;
  };
}
