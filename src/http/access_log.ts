/**
 * Around every handler of the interface's paths: starts the findings list, puts an X-Request-ID
 * that is a UUID on every response (the request's own, or one made here when the request had none
 * or an invalid one, also in the log line), and records each request once: one JSON access-log
 * line, the metrics, the trace span's attributes. PSU identifiers are masked (or pseudonymised:
 * `access_log.psu_id: hmac`), account numbers masked, also in the paths of 404s and 405s; secrets,
 * tokens and signatures never appear. A refusal for a security reason is also one ECS event
 * (`security_events.ts`), built from this line's facts.
 */
import { createHmac } from "node:crypto";
import { answerHeader, requestHeaders } from "../core/request.ts";
import { type GatewayContext } from "../core/check.ts";
import type { ErrorResponder } from "../core/chain.ts";
import { finish } from "../core/answer.ts";
import type { Services } from "../core/services.ts";
import type { CounterCell, HistogramSeries } from "../lib/metrics.ts";
import { mask, maskedPath, maskedUnknownPath } from "../lib/mask.ts";
import {
  type Operation,
  OPERATIONS,
  PAYMENT_PRODUCTS,
  PAYMENT_SERVICES,
  PRODUCT_LOCALES,
} from "../psd2/catalogue.ts";
import { annotateSpan, TRACING } from "../lib/tracing.ts";
import { UUID } from "../lib/ids.ts";
import type { PolicySections } from "../sections/sections.ts";
import { refusalOf, securityEvent } from "./security_events.ts";

/** The literal segments of the interface's paths: what the path of a 404 or 405 logs as sent. */
const KNOWN_SEGMENTS: ReadonlySet<string> = new Set([
  ...OPERATIONS.flatMap((op) => op.path.split("/").filter((s) => s && !s.startsWith("{"))),
  ...PAYMENT_SERVICES,
  ...PAYMENT_PRODUCTS,
  ...PRODUCT_LOCALES,
]);

/**
 * The request path as the access log shows it. An operation's path has its account ids masked. A
 * path no operation has (a 404, a 405), or one that fits a template only with a payment service,
 * product or locale the interface does not have (`/v1/accounts/<IBAN>/balancez` fits
 * `/v1/{payment-service}/{payment-product}/{paymentId}`), may carry an IBAN anywhere: every
 * segment but the interface's own words is masked.
 */
function loggedPath(c: GatewayContext): string {
  const op = c.get("op");
  const params = c.get("params");
  if (!op || !knownValues(op, params)) return maskedUnknownPath(c.req.path, KNOWN_SEGMENTS);
  return op.sensitive ? maskedPath(c.req.path, op.path, params) : c.req.path;
}

/** Whether every parameter with a list of values has one of them. */
function knownValues(op: Operation, params: Record<string, string>): boolean {
  for (const name in op.params) {
    const values = op.params[name].values;
    if (values && !values.includes(params[name])) return false;
  }
  return true;
}

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
    path: loggedPath(c),
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
    // TPP libraries match answers to requests by this header and type it as a UUID: an answer
    // never goes without one, nor echoes one that is not (the error text says what was wrong).
    const requestId = header !== null && UUID.test(header) ? header : crypto.randomUUID();
    answerHeader(c, "x-request-id", requestId);
    let response: Response;
    try {
      response = await handler(c);
    } catch (error) {
      response = finish(c, respond(error, c));
    }
    c.res = response;
    const ms = Math.round((performance.now() - started) * 10) / 10;
    const line = logLine(c, clock(), ms, requestId, psu);
    // A refusal for a security reason is also one event for the SIEM, from the same facts; the
    // access-log line stays the request's last.
    const refusal = refusalOf(c, line.status);
    if (refusal) metrics.tppRefusals.inc({ tpp: line.tpp ?? "none", check: refusal.check });
    const event = refusal && securityEvent(refusal, { ...line, requestId });
    if (event) services.log.info(event);
    services.log.info(line);
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
