/**
 * Tracing of upstream exchanges for the gateway's own client: with `OTEL_DENO=true`, each
 * exchange is a client span under the request's span, and its W3C trace context (`traceparent`,
 * `tracestate`) travels to the core, as Deno does for `fetch` by itself.
 */
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Upstream } from "./exchange.ts";

const tracer = trace.getTracer("xs2a-edge");

/** `upstream` with every exchange in a client span whose context the request carries. */
export function tracedUpstream(upstream: Upstream): Upstream {
  return {
    async send(request) {
      const { hostname, port } = new URL(request.origin);
      const span = tracer.startSpan(request.method, {
        kind: SpanKind.CLIENT,
        attributes: {
          "http.request.method": request.method,
          "server.address": hostname,
          "server.port": Number(port) || (request.origin.startsWith("https:") ? 443 : 80),
        },
      }, context.active());
      const own = span.spanContext();
      const headers = request.headers.filter(([name]) =>
        name !== "traceparent" && name !== "tracestate"
      );
      if (trace.isSpanContextValid(own)) {
        const sampled = (own.traceFlags & 1) === 1 ? "01" : "00";
        headers.push(["traceparent", `00-${own.traceId}-${own.spanId}-${sampled}`]);
        const state = own.traceState?.serialize();
        if (state) headers.push(["tracestate", state]);
      }
      try {
        const answer = await upstream.send({ ...request, headers });
        span.setAttribute("http.response.status_code", answer.status);
        if (answer.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        return answer;
      } catch (error) {
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: (error as { failure?: string }).failure ?? "failed",
        });
        throw error;
      } finally {
        span.end();
      }
    },
    close: () => upstream.close(),
  };
}
