/**
 * What checks read of the request, each read once per request and shared: the headers, the JSON
 * body, the peer's address; and what they add to the answer or take out of the forwarded request.
 */
import type { GatewayContext } from "./check.ts";
import { GatewayError } from "../psd2/errors.ts";
import { HeaderPairs, pairs } from "../lib/header_pairs.ts";
import { normalAddress } from "../lib/terminators.ts";
import { utf8 } from "../lib/utf8.ts";

/** What these helpers keep per request: reads done once, and what the answer gains or loses. */
export interface RequestVariables {
  /** The request headers read once, when `requestHeaders()` or `headerList()` first ran. */
  headerLookup?: HeaderPairs;
  /** The request body parsed as JSON, once `jsonBody()` ran. */
  json?: unknown;
  /** The request body decoded from UTF-8 (null: it is not UTF-8), once `bodyText()` ran. */
  bodyText?: string | null;
  /** The connection peer's address ("" when unknown), once `peerAddress()` ran. */
  peerAddress?: string;
  /** The client's address ("" when unknown), once `clientAddress()` ran. */
  clientAddress?: string;
  /** Headers of the answer decided before it exists; see {@link answerHeader}. */
  answerHeaders?: [string, string][];
  /** Request headers (lower case) the proxy must not forward, for example a malformed ignorable one. */
  dropHeaders?: Set<string>;
}

declare module "./check.ts" {
  interface GatewayVariables extends RequestVariables {}
}

/**
 * The request body as JSON, parsed once and shared by every check that needs it; a body that is
 * not UTF-8 JSON is 400 FORMAT_ERROR. An empty body is `undefined`.
 */
export function jsonBody(c: GatewayContext): unknown {
  if (c.get("json") !== undefined || c.get("body").byteLength === 0) return c.get("json");
  try {
    const text = bodyText(c);
    if (text === undefined) throw new TypeError("The body is not UTF-8");
    c.set("json", JSON.parse(text));
  } catch {
    throw new GatewayError(400, "FORMAT_ERROR", "The request body must be well-formed JSON", {
      path: "body",
    });
  }
  return c.get("json");
}

/**
 * The request body as UTF-8 text, decoded once and shared by the checks that read it (a leading
 * byte order mark dropped); `undefined` when it is not UTF-8.
 */
export function bodyText(c: GatewayContext): string | undefined {
  let text = c.get("bodyText");
  if (text === undefined) {
    text = utf8(c.get("body")) ?? null;
    c.set("bodyText", text);
  }
  return text ?? undefined;
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
 *
 * A header sent with an empty value (or only whitespace, which HTTP trims) is absent here, for
 * every check and for the proxy alike: one rule instead of one per check
 * (docs/interoperability.md, "Leniency").
 */
export function requestHeaders(c: GatewayContext): HeaderPairs {
  let lookup = c.get("headerLookup");
  if (!lookup) {
    lookup = new HeaderPairs(withoutEmpty(pairs(c.req.raw.headers)));
    c.set("headerLookup", lookup);
  }
  return lookup;
}

/** The list without entries whose value is empty (the list itself when it has none). */
function withoutEmpty(list: [string, string][]): [string, string][] {
  for (const entry of list) {
    if (entry[1] === "") return list.filter((e) => e[1] !== "");
  }
  return list;
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
export function peerAddress(c: GatewayContext): string | undefined {
  let address = c.get("peerAddress");
  if (address === undefined) {
    const info = c.env as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined;
    const hostname = info?.remoteAddr?.hostname ?? "";
    address = normalAddress(hostname) ?? hostname;
    c.set("peerAddress", address);
  }
  return address || undefined;
}

/** Whether the peer is one of the policy's TLS terminators (`trust.terminators`). */
export function fromTerminator(c: GatewayContext): boolean {
  return c.get("terminators")?.trusts(peerAddress(c)) ?? false;
}

/**
 * The client's address. Behind a listed TLS terminator it is the rightmost address of
 * X-Forwarded-For that is not a terminator, or, when `header` names a header of the terminator's
 * own (for example `X-Real-IP`), that header's last value; from any other peer it is the peer's
 * address, whatever the headers say. A policy without terminators believes loopback peers only.
 */
export function clientAddress(c: GatewayContext, header?: string): string | undefined {
  if (header && fromTerminator(c)) {
    const value = requestHeaders(c).get(header)?.split(",").at(-1)?.trim();
    const address = value ? normalAddress(value) : undefined;
    if (address) return address;
  }
  let address = c.get("clientAddress");
  if (address === undefined) {
    const peer = peerAddress(c) ?? "";
    const terminators = c.get("terminators");
    address = peer && terminators
      ? terminators.clientAddress(peer, requestHeaders(c).get("x-forwarded-for"))
      : peer;
    c.set("clientAddress", address);
  }
  return address || undefined;
}
