/**
 * What keeps the sandbox controls (`/sandbox/*`) to their callers: a developer's client, a test,
 * never a web page. They are not served on the SCA pages' origin (a PSU's browser reaches that
 * one, and the request log there would show every TPP's requests), and a change (POST, PUT) that a
 * browser sends from another site is refused: a page could otherwise approve an authorisation or
 * reset the bank with a plain form post. Clients that are no browser send neither `Origin` nor
 * `Sec-Fetch-Site` and pass.
 */
import type { Context, Next } from "hono";
import { renderNotFound, SandboxError } from "./errors.ts";
import type { SandboxState } from "./state.ts";

/** Methods that change nothing (RFC 9110 9.2.1). */
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/** Middleware for `/sandbox/*`. */
export function guardControls(state: SandboxState) {
  return async (c: Context, next: Next) => {
    const host = new URL(c.req.url).host;
    if (host === URL.parse(state.settings.scaOrigin())?.host) return renderNotFound(c);
    if (!SAFE.has(c.req.method) && crossSite(c.req.raw.headers, host)) {
      throw new SandboxError(403, "SERVICE_BLOCKED", {
        text: "The sandbox controls take changes from their own origin only",
      });
    }
    await next();
  };
}

/**
 * Whether a browser sent the request from another origin: `Sec-Fetch-Site` says so where the
 * browser sends it; else an `Origin` of another host (or `null`, an opaque origin).
 */
export function crossSite(headers: Headers, host: string): boolean {
  const site = headers.get("sec-fetch-site");
  if (site !== null) return site !== "same-origin" && site !== "none";
  const origin = headers.get("origin");
  if (origin === null) return false;
  return URL.parse(origin)?.host !== host;
}
