/**
 * The upstream client: what the proxy asks of the connection to the bank's core, with two
 * backends chosen by the policy's `upstream.client`: the gateway's own HTTP/1.1 client
 * (`http1`, the default) and the runtime's `fetch` (for HTTP/2 cores, outbound proxies and
 * platforms without outbound TCP).
 */
import { Http1Upstream } from "./http1/client.ts";
import { fetchUpstream } from "./fetch.ts";
import { TRACING } from "../lib/tracing.ts";
import type { UPSTREAM_CLIENTS, UPSTREAM_REUSE } from "../sections/sections.ts";

export {
  type Upstream,
  type UpstreamAnswer,
  UpstreamError,
  type UpstreamFailure,
  type UpstreamRequest,
} from "./exchange.ts";
import type { Upstream } from "./exchange.ts";

/** The tracing wrapper (and @opentelemetry/api with it), loaded only when tracing is on. */
const traced = TRACING ? await import("./traced.ts") : undefined;

/** Builds the client the policy's `upstream` section names. */
export function createUpstream(
  section: { client: typeof UPSTREAM_CLIENTS[number]; reuse?: typeof UPSTREAM_REUSE[number] },
  fetch: typeof globalThis.fetch = globalThis.fetch,
): Upstream {
  const reuse = section.reuse ?? "echoed";
  if (section.client === "fetch") return fetchUpstream(fetch, reuse);
  const http1 = new Http1Upstream(reuse);
  // Deno traces `fetch` by itself; the gateway's own client is traced here.
  return traced ? traced.tracedUpstream(http1) : http1;
}
