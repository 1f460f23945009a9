/**
 * OpenTelemetry: with `OTEL_DENO=true`, Deno traces every request (Deno.serve) itself, and
 * upstream calls made with `fetch` (src/upstream/traced.ts traces the gateway's own client); the
 * gateway names the request's span after the operation and adds the operation id, X-Request-ID,
 * TPP and outcome as attributes.
 */

/** Whether Deno's built-in OpenTelemetry export is on (read once). */
export const TRACING = (() => {
  try {
    return Deno.env.get("OTEL_DENO") === "true";
  } catch {
    return false;
  }
})();

/**
 * @opentelemetry/api (a CommonJS package: some 20-60 ms of a cold start), loaded only when
 * tracing is on.
 */
export const OTEL: typeof import("@opentelemetry/api") | undefined = TRACING
  ? await import("@opentelemetry/api")
  : undefined;

/** What the gateway adds to the active request span. */
export interface SpanFacts {
  method: string;
  route?: string;
  operation?: string;
  requestId?: string;
  tpp?: string;
  status: number;
}

/** Names and annotates the active span; does nothing when tracing is off. */
export function annotateSpan(facts: SpanFacts): void {
  if (!OTEL) return;
  const span = OTEL.trace.getActiveSpan();
  if (!span) return;
  if (facts.route) span.updateName(`${facts.method} ${facts.route}`);
  span.setAttributes({
    "http.route": facts.route ?? "",
    "xs2a.operation": facts.operation ?? "",
    "xs2a.request_id": facts.requestId ?? "",
    "xs2a.tpp": facts.tpp ?? "",
    "http.response.status_code": facts.status,
  });
}
