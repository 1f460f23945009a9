/**
 * What checks read of the request, each read once per request and shared: the headers, the JSON
 * body, the peer's address; and what they add to the answer or take out of the forwarded request.
 */
import type { GatewayContext } from "./check.ts";
import { GatewayError } from "./errors.ts";
import { HeaderPairs, pairs } from "../lib/header_pairs.ts";

/** What these helpers keep per request: reads done once, and what the answer gains or loses. */
export interface RequestVariables {
  /** The request headers read once, when `requestHeaders()` or `headerList()` first ran. */
  headerLookup?: HeaderPairs;
  /** The request body parsed as JSON, once `jsonBody()` ran. */
  json?: unknown;
  /** The connection peer's address ("" when unknown), once `clientAddress()` ran. */
  clientAddress?: string;
  /** Headers of the answer decided before it exists; see {@link answerHeader}. */
  answerHeaders?: [string, string][];
  /** Request headers (lower case) the proxy must not forward, for example a malformed ignorable one. */
  dropHeaders?: Set<string>;
}

declare module "./check.ts" {
  interface GatewayVariables extends RequestVariables {}
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * The request body as JSON, parsed once and shared by every check that needs it; a body that is
 * not UTF-8 JSON is 400 FORMAT_ERROR. An empty body is `undefined`.
 */
export function jsonBody(c: GatewayContext): unknown {
  if (c.get("json") !== undefined || c.get("body").byteLength === 0) return c.get("json");
  try {
    c.set("json", JSON.parse(decoder.decode(c.get("body"))));
  } catch {
    throw new GatewayError(400, "FORMAT_ERROR", "The request body must be well-formed JSON", {
      path: "body",
    });
  }
  return c.get("json");
}

/**
 * The request's headers as name/value pairs, read once per request (iterating `Headers` sorts and
 * copies them every time).
 */
export function headerList(c: GatewayContext): [string, string][] {
  return requestHeaders(c).list;
}

/**
 * The request's headers for lookups. Each `Headers.get` on a request `Deno.serve` received is a
 * call into the runtime with the name validated again (about 0.25 us, and a request of the
 * default policy asks for 18 headers); these lookups scan the list read once ({@link headerList}).
 */
export function requestHeaders(c: GatewayContext): HeaderPairs {
  let lookup = c.get("headerLookup");
  if (!lookup) {
    lookup = new HeaderPairs(pairs(c.req.raw.headers));
    c.set("headerLookup", lookup);
  }
  return lookup;
}

/**
 * Adds a header to the request's answer, whichever builds it (X-Request-ID echo, RateLimit-*,
 * Deprecation): the proxy builds its response with these headers, and the access log sets them on
 * any other answer (an error, a replay). A check adds them before it passes the request on, never
 * to `c.res` afterwards: Deno prepares a response for the wire when it is constructed, and reading
 * its `headers` throws that work away. A later value replaces an earlier one of the same name.
 */
export function answerHeader(c: GatewayContext, name: string, value: string): void {
  const list = c.get("answerHeaders");
  if (!list) {
    c.set("answerHeaders", [[name, value]]);
    return;
  }
  const same = list.findIndex((entry) => entry[0] === name);
  if (same >= 0) list[same] = [name, value];
  else list.push([name, value]);
}

/** The header value, or `undefined` when absent. */
export function header(c: GatewayContext, name: string): string | undefined {
  return requestHeaders(c).get(name) ?? undefined;
}

/** Removes a header from what the proxy forwards (the checks before still saw it). */
export function dropHeader(c: GatewayContext, name: string): void {
  const dropped = c.get("dropHeaders") ?? new Set<string>();
  dropped.add(name);
  c.set("dropHeaders", dropped);
}

/**
 * The address of the connection's peer (the client, or the TLS terminator in front), read once
 * per request: `remoteAddr` asks the runtime and builds a new object each time.
 */
export function clientAddress(c: GatewayContext): string | undefined {
  let address = c.get("clientAddress");
  if (address === undefined) {
    const info = c.env as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined;
    address = info?.remoteAddr?.hostname ?? "";
    c.set("clientAddress", address);
  }
  return address || undefined;
}
