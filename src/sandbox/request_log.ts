/**
 * The sandbox's request log: every request on an interface path (what the gateway forwarded),
 * with its headers, body and the status answered, for `GET /sandbox/requests`. The SCA page and
 * the controls are not logged. Bodies are kept as received, passwords included: this is a test
 * bank with test users only.
 */
import type { Context, Next } from "hono";
import { MAX_RECORDED_BODY, MAX_RECORDED_REQUESTS, type SandboxState } from "./state.ts";

/** Paths that are not part of the interface. */
const OWN = ["/sandbox/", "/sca/"];

/** Middleware that records each interface request once it is answered. */
export function recordRequests(state: SandboxState) {
  return async (c: Context, next: Next) => {
    const path = c.req.path;
    if (OWN.some((prefix) => path.startsWith(prefix))) return next();
    const url = new URL(c.req.url);
    const at = state.now().toISOString();
    let body = "";
    if (c.req.raw.body) {
      try {
        // Read through Hono, which keeps the text for the handler's own c.req.text(): a clone of
        // the request would read its signal, and Deno.serve then warns at every start of the
        // sandbox that request.signal aborts on successful responses (legacy behaviour).
        body = await c.req.text();
      } catch {
        body = "";
      }
    }
    await next();
    state.requests.push({
      at,
      method: c.req.method,
      target: `${url.pathname}${url.search}`,
      headers: Object.fromEntries(c.req.raw.headers),
      body: body.length > MAX_RECORDED_BODY ? body.slice(0, MAX_RECORDED_BODY) : body,
      status: c.res.status,
    });
    if (state.requests.length > MAX_RECORDED_REQUESTS) {
      state.requests.splice(0, state.requests.length - MAX_RECORDED_REQUESTS);
    }
  };
}
