/**
 * Forwarding one request to the core and taking its answer, as plain data: the upstream target
 * from the operation's path template, the request headers that go (hop-by-hop ones never, the
 * gateway's X-Forwarded-For and X-Forwarded-Proto always), the exchange (a read retried once when
 * the connection failed before any answer), the answer headers that come back, an answer cut off
 * by its connection's end, and an upstream failure turned into the Berlin Group 503 it is.
 *
 * The proxy (middleware/proxy.ts) reads the request, calls these and builds the response.
 */
import { RETRY_AFTER_SECONDS } from "../psd2/retry_after.ts";
import type { Bytes } from "../lib/body.ts";
import { isJson } from "../lib/media_type.ts";
import { formatError, GatewayError } from "../psd2/errors.ts";
import { type Upstream, type UpstreamAnswer, UpstreamError } from "./exchange.ts";

/** Headers that belong to one connection and never cross the proxy (RFC 9110 7.6.1). */
export const HOP_BY_HOP: readonly string[] = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
];

/**
 * Request headers every operation forwards besides those the catalogue lists for it: the media
 * types (the `accept` and `content-type` checks judge them), the date a request signature may
 * cover, and the W3C trace context.
 */
export const ALWAYS_FORWARDED: readonly string[] = [
  "accept",
  "content-type",
  "date",
  "traceparent",
  "tracestate",
];

/**
 * The headers in which TLS terminators pass a client certificate or what they read of it (nginx,
 * Envoy, RFC 9440, HAProxy, Azure, AWS): never forwarded, whatever the policy's lists say, except
 * the one header in which the gateway verified the request's certificate. A client that adds one
 * beside the verified certificate would name another TPP to the core.
 */
export const CERTIFICATE_HEADERS: readonly string[] = [
  "x-ssl-client-cert",
  "x-ssl-client-certificate",
  "x-ssl-client-verify",
  "x-ssl-client-s-dn",
  "x-ssl-client-i-dn",
  "x-ssl-client-serial",
  "x-ssl-client-fingerprint",
  "x-forwarded-client-cert",
  "client-cert",
  "client-cert-chain",
  "ssl-client-cert",
  "x-client-cert",
  "x-client-certificate",
  "x-client-dn",
  "x-client-verify",
  "x-arr-clientcert",
  "x-amzn-mtls-clientcert",
  "x-amzn-mtls-clientcert-leaf",
  "x-amzn-mtls-clientcert-serial-number",
  "x-amzn-mtls-clientcert-subject",
  "x-amzn-mtls-clientcert-issuer",
];

/**
 * What a TLS terminator says of the connection it took: believed, and forwarded when the policy
 * names it, only from a terminator (`trust.terminators`); from anyone else the gateway says it.
 */
const TERMINATOR_ONLY: ReadonlySet<string> = new Set([
  "x-forwarded-for",
  "x-forwarded-proto",
  "x-forwarded-host",
  "x-forwarded-port",
]);

/** Upstream response headers that reveal the core's internals. */
export const INTERNAL: readonly string[] = [
  "server",
  "x-powered-by",
  "x-aspnet-version",
  "x-aspnetmvc-version",
  "via",
];

/** What a write's failure text adds when the write may have reached the bank. */
const OUTCOME_UNKNOWN = "; the outcome is unknown, read the resource status before retrying";

const decoder = new TextDecoder();

/** Where and how one operation's requests are forwarded, compiled once per operation. */
export interface Route {
  method: string;
  /** Scheme, host and port of the upstream. */
  origin: string;
  /** The upstream URL's own path, in front of every target. */
  prefix: string;
  /** The operation's upstream path of the request's path parameters. */
  path: (params: Record<string, string>) => string;
  /** POST, PUT, DELETE: never retried, and their failures may leave an unknown outcome. */
  writes: boolean;
  /** Retries after a connection failure before any answer (reads only). */
  retries: number;
  timeoutMs: number;
  maxBytes: number;
}

/** Compiles the route of an operation. */
export function compileRoute(options: {
  /** The upstream's base URL (policy `upstream.url`). */
  url: string;
  /** The operation's upstream path template, `{name}` for each path parameter. */
  template: string;
  method: string;
  timeoutMs: number;
  retryReads: boolean;
  maxBytes: number;
}): Readonly<Route> {
  const { origin, pathname } = new URL(options.url.replace(/\/+$/, ""));
  return Object.freeze({
    method: options.method,
    origin,
    prefix: pathname.replace(/\/+$/, ""),
    path: compileTemplate(options.template),
    writes: options.method !== "GET",
    retries: options.retryReads && options.method === "GET" ? 1 : 0,
    timeoutMs: options.timeoutMs,
    maxBytes: options.maxBytes,
  });
}

/** A path template compiled into a function of the path parameters. */
function compileTemplate(template: string): (params: Record<string, string>) => string {
  const parts = template.split(/\{([^}]+)\}/);
  return (params) => {
    let out = parts[0];
    for (let i = 1; i < parts.length; i += 2) {
      const value = params[parts[i]] ?? "";
      // "." and ".." (however encoded) are dot segments to every URL parser: the upstream would
      // get another path. Refused here whatever the path_params check's mode.
      if (value === "." || value === "..") {
        throw formatError(parts[i], `Path parameter "${parts[i]}" must not be "${value}"`);
      }
      out += encodeURIComponent(value) + parts[i + 1];
    }
    return out;
  };
}

/** The upstream target (path and query) of a request to `url` with these path parameters. */
export function upstreamTarget(route: Route, params: Record<string, string>, url: string): string {
  const query = url.indexOf("?");
  return route.prefix + route.path(params) + (query < 0 ? "" : url.slice(query));
}

/** What {@link forwardedHeaders} needs to know of the request besides its headers. */
export interface ForwardContext {
  /** Names forwarded (lower case): any other is left out. */
  allow: ReadonlySet<string>;
  /** Names left out without notice: hop-by-hop ones (every request has a Host). */
  strip: ReadonlySet<string>;
  /** Collects the names left out because they are not allowed (when given). */
  unlisted?: string[];
  /** Names a check dropped from this request. */
  dropped?: ReadonlySet<string>;
  /** The connection peer's address, appended to X-Forwarded-For. */
  peerAddress?: string;
  /** Whether the peer is a TLS terminator, whose X-Forwarded-* are believed. */
  fromTerminator?: boolean;
  /** The header (lower case) in which the gateway verified the request's certificate. */
  certificate?: string;
  /** Whether the request came over https. */
  https: boolean;
}

/**
 * The request headers to forward: the allowed ones a check did not drop, the verified certificate
 * in its one header, X-Forwarded-For with the peer appended, X-Forwarded-Proto unless a terminator
 * set it, and `Accept-Encoding: identity` whatever the client accepts: the gateway reads the
 * answer (links, replays), so the core must not encode it. Anything else (X-HTTP-Method-Override,
 * X-Original-URL, Forwarded, names with `_`, another certificate header, the X-Forwarded-* of a
 * peer that is no terminator, ...) never reaches the core.
 */
export function forwardedHeaders(
  list: readonly [string, string][],
  context: ForwardContext,
): [string, string][] {
  const headers: [string, string][] = [];
  let forwardedFor: string | undefined;
  let forwardedProto = false;
  const { allow, strip, dropped, unlisted, certificate } = context;
  const believed = context.fromTerminator === true;
  for (const entry of list) {
    const name = entry[0];
    if (strip.has(name) || dropped?.has(name) || name === "accept-encoding") continue;
    if (name === certificate) headers.push(entry);
    else if (TERMINATOR_ONLY.has(name) && !believed) unlisted?.push(name);
    else if (name === "x-forwarded-for") forwardedFor = entry[1];
    else if (name === "x-forwarded-proto") {
      forwardedProto = true;
      headers.push(entry);
    } else if (allow.has(name)) headers.push(entry);
    else unlisted?.push(name);
  }
  const address = context.peerAddress;
  const chain = address ? (forwardedFor ? `${forwardedFor}, ${address}` : address) : forwardedFor;
  if (chain) headers.push(["x-forwarded-for", chain]);
  if (!forwardedProto) headers.push(["x-forwarded-proto", context.https ? "https" : "http"]);
  headers.push(["accept-encoding", "identity"]);
  return headers;
}

/**
 * What is left of the deadline for a retry, in whole tenths of a second: deadlines share timers
 * by their length (src/lib/deadline.ts), so lengths must come from a small set.
 */
function remaining(route: Route, started: number): number {
  const left = route.timeoutMs - (performance.now() - started);
  return Math.max(100, Math.ceil(left / 100) * 100);
}

/**
 * The exchange with the upstream: a read is retried (once by default) when the connection failed
 * before any answer; a write never is. Throws the last {@link UpstreamError}.
 */
export async function exchange(
  upstream: Upstream,
  route: Route,
  request: { target: string; headers: [string, string][]; body?: Bytes; started: number },
): Promise<UpstreamAnswer> {
  for (let attempt = 0;; attempt++) {
    try {
      return await upstream.send({
        method: route.method,
        origin: route.origin,
        target: request.target,
        headers: request.headers,
        body: route.writes ? request.body : undefined,
        timeoutMs: attempt === 0 ? route.timeoutMs : remaining(route, request.started),
        maxBytes: route.maxBytes,
      });
    } catch (error) {
      const early = error instanceof UpstreamError &&
        (error.failure === "refused" || error.failure === "reset");
      if (!early || attempt >= route.retries) throw error;
    }
  }
}

function unavailable(code: "UPSTREAM_UNAVAILABLE" | "UPSTREAM_TIMEOUT", text: string) {
  return new GatewayError(503, code, text, {
    headers: { "retry-after": String(RETRY_AFTER_SECONDS.upstreamUnavailable) },
  });
}

/** The Berlin Group answer to a failed exchange, and whether a write's outcome is now unknown. */
export interface Failure {
  error: GatewayError;
  /** The write may have reached the bank: idempotency keeps this answer for its X-Request-ID. */
  outcomeUnknown: boolean;
}

/** The 503 of a failed exchange; a write that may have reached the bank has an unknown outcome. */
export function failure(route: Route, error: unknown): Failure {
  const kind = error instanceof UpstreamError ? error.failure : "broken";
  const writes = route.writes;
  const outcomeUnknown = writes && kind !== "refused";
  if (kind === "timeout") {
    return {
      error: unavailable(
        "UPSTREAM_TIMEOUT",
        `The bank did not answer in time${writes ? OUTCOME_UNKNOWN : ""}`,
      ),
      outcomeUnknown,
    };
  }
  if (kind === "too_large") {
    return {
      error: unavailable(
        "UPSTREAM_UNAVAILABLE",
        `The bank's answer was too large to pass on${writes ? OUTCOME_UNKNOWN : ""}`,
      ),
      outcomeUnknown,
    };
  }
  if (!writes || kind === "refused") {
    return {
      error: unavailable("UPSTREAM_UNAVAILABLE", "The bank could not be reached"),
      outcomeUnknown,
    };
  }
  return {
    error: unavailable("UPSTREAM_UNAVAILABLE", `The bank broke the connection${OUTCOME_UNKNOWN}`),
    outcomeUnknown,
  };
}

/**
 * The failure of an answer framed only by the end of its connection (no Content-Length, not
 * chunked) that was cut off: it looks complete when the connection is cut, so a JSON one that does
 * not parse is taken as cut off. `undefined` when the answer is whole.
 */
export function cutOff(route: Route, answer: UpstreamAnswer, json: boolean): Failure | undefined {
  if (!answer.closeDelimited || answer.body.byteLength === 0 || !json) return undefined;
  try {
    JSON.parse(decoder.decode(answer.body));
    return undefined;
  } catch {
    return {
      error: unavailable(
        "UPSTREAM_UNAVAILABLE",
        `The bank broke the connection${route.writes ? OUTCOME_UNKNOWN : ""}`,
      ),
      outcomeUnknown: route.writes,
    };
  }
}

/**
 * The answer's headers to pass on: the allowed ones; whether the answer is JSON (its media type,
 * in any case), and whether it is encoded (a Content-Encoding other than identity). Any other
 * header of the core (`Set-Cookie`, `X-Internal-Host`, `X-Debug-Trace`, ...) never reaches the
 * client.
 */
export function answerHeaders(
  headers: readonly [string, string][],
  allow: ReadonlySet<string>,
): { headers: [string, string][]; json: boolean; encoded: boolean } {
  const passed: [string, string][] = [];
  let json = false;
  let encoded = false;
  for (const entry of headers) {
    const name = entry[0];
    if (name === "content-encoding" && !/^\s*identity\s*$/i.test(entry[1])) encoded = true;
    if (name === "content-type") json = isJson(entry[1]);
    if (allow.has(name)) passed.push(entry);
  }
  return { headers: passed, json, encoded };
}

/**
 * The failure of an answer the core encoded although the gateway asked for identity: it cannot be
 * read (links, replays) nor passed on under its content type.
 */
export function encodedAnswer(route: Route): Failure {
  return {
    error: unavailable(
      "UPSTREAM_UNAVAILABLE",
      `The bank's answer was encoded and cannot be passed on${route.writes ? OUTCOME_UNKNOWN : ""}`,
    ),
    outcomeUnknown: route.writes,
  };
}
