/**
 * `proxy`: the terminal handler. Forwards the request (the bytes `body_limit` read) to the
 * operation's upstream path, with hop-by-hop and internal headers stripped both ways, a deadline
 * on the whole exchange, and upstream failures turned into Berlin Group errors. Writes are never
 * retried; a read may be retried once after a connection error.
 */
import { z } from "zod";
import { errorText } from "../src/mask.ts";
import { defineCheck, type GatewayContext, headerList } from "../src/check.ts";
import { BodyLimitError, type Bytes, readBody } from "../src/body.ts";
import { deadlineSignal } from "../src/deadline.ts";
import { formatError, GatewayError } from "../src/errors.ts";

const decoder = new TextDecoder();
/** Decodes an answer whose links are rewritten: bytes that are not UTF-8 must not be replaced. */
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Headers that belong to one connection and never cross the proxy (RFC 9110 7.6.1). */
const HOP_BY_HOP = [
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

/** Upstream response headers that reveal the core's internals. */
const INTERNAL = ["server", "x-powered-by", "x-aspnet-version", "x-aspnetmvc-version", "via"];

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

/** The upstream path template of an operation: its own, or the public path under the prefix. */
export function upstreamTemplate(
  operation: { path: string; upstreamPath?: string },
  prefix: string,
): string {
  return operation.upstreamPath ?? prefix + operation.path.replace(/^\/v1(?=\/|$)/, "");
}

/** The address of the connection's peer (the client, or the TLS terminator in front). */
export function clientAddress(c: GatewayContext): string | undefined {
  const info = c.env as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined;
  return info?.remoteAddr?.hostname;
}

function requestHeaders(c: GatewayContext, strip: Set<string>): [string, string][] {
  const headers: [string, string][] = [];
  let forwardedFor: string | undefined;
  let forwardedProto = false;
  const dropped = c.get("dropHeaders");
  for (const entry of headerList(c)) {
    const name = entry[0];
    if (strip.has(name) || dropped?.has(name)) continue;
    if (name === "x-forwarded-for") forwardedFor = entry[1];
    else {
      if (name === "x-forwarded-proto") forwardedProto = true;
      headers.push(entry);
    }
  }
  const address = clientAddress(c);
  const chain = address ? (forwardedFor ? `${forwardedFor}, ${address}` : address) : forwardedFor;
  if (chain) headers.push(["x-forwarded-for", chain]);
  if (!forwardedProto) {
    headers.push(["x-forwarded-proto", c.req.url.startsWith("https:") ? "https" : "http"]);
  }
  return headers;
}

function unavailable(code: "UPSTREAM_UNAVAILABLE" | "UPSTREAM_TIMEOUT", text: string) {
  return new GatewayError(503, code, text, { headers: { "retry-after": "5" } });
}

/**
 * An answer framed only by the end of its connection (no Content-Length, not chunked) looks
 * complete when the connection is cut; a JSON one that does not parse was cut off.
 */
function cutOff(response: Response, body: Bytes): boolean {
  const headers = response.headers;
  if (body.byteLength === 0 || headers.has("content-length")) return false;
  if (headers.get("transfer-encoding")?.includes("chunked")) return false;
  if (!headers.get("content-type")?.includes("json")) return false;
  try {
    JSON.parse(decoder.decode(body));
    return false;
  } catch {
    return true;
  }
}

/** The text of a UTF-8 body, or undefined when its bytes are not UTF-8. */
function utf8(body: Bytes): string | undefined {
  try {
    return strictDecoder.decode(body);
  } catch {
    return undefined;
  }
}

/** The connection to the upstream could not be opened: the request never reached it. */
function isConnectFailure(error: unknown): boolean {
  const text = String(error) + String((error as { cause?: unknown })?.cause ?? "");
  return /client error \(Connect\)|tcp connect error|Connection refused|ECONNREFUSED/i.test(text);
}

function isTimeout(error: unknown): boolean {
  return error instanceof DOMException &&
    (error.name === "TimeoutError" || error.name === "AbortError");
}

export const proxy = defineCheck({
  key: "proxy",
  description: "Forwards the request to the upstream and returns its answer",
  options: z.object({
    timeout_ms: z.number().int().positive().default(10_000).describe(
      "Deadline for the whole upstream exchange (request, answer and its body), in milliseconds (kept to within 50 ms)",
    ),
    retry_reads: z.boolean().default(true).describe(
      "Retry a GET once when the connection to the upstream fails before any answer (writes are never retried)",
    ),
    max_response_bytes: z.number().int().positive().default(10_485_760).describe(
      "Largest upstream response body passed on; larger answers become 503 UPSTREAM_UNAVAILABLE",
    ),
    hide_headers: z.array(z.string().regex(/^[A-Za-z0-9-]+$/)).default([]).describe(
      "Further upstream response headers to remove (Server, X-Powered-By and hop-by-hop ones always are)",
    ),
    no_store: z.enum(["sensitive", "always", "never"]).default("sensitive").describe(
      "Add Cache-Control: no-store to account and payment data (sensitive), to every answer, or never",
    ),
  }).strict(),
  create(options, { operation, services, sections }) {
    const base = sections.upstream.url.replace(/\/+$/, "");
    const path = compileTemplate(upstreamTemplate(operation, sections.upstream.prefix));
    const method = operation.method;
    const retries = options.retry_reads && method === "GET" ? 1 : 0;
    const stripRequest = new Set(HOP_BY_HOP);
    const noStore = options.no_store === "always" ||
      (options.no_store === "sensitive" && operation.sensitive);
    const stripResponse = new Set([
      ...HOP_BY_HOP,
      ...INTERNAL,
      "content-encoding",
      "x-content-type-options",
      ...(noStore ? ["cache-control"] : []),
      ...options.hide_headers.map((h) => h.toLowerCase()),
    ]);
    const writes = method !== "GET";

    async function exchange(c: GatewayContext, url: string, signal: AbortSignal) {
      for (let attempt = 0;; attempt++) {
        try {
          return await services.fetch(url, {
            method,
            headers: requestHeaders(c, stripRequest),
            body: writes && c.get("body").byteLength > 0 ? c.get("body") : undefined,
            redirect: "manual",
            signal,
          });
        } catch (error) {
          if (isTimeout(error)) throw error;
          if (attempt >= retries) throw error;
        }
      }
    }

    return async (c) => {
      const raw = c.req.url;
      const query = raw.indexOf("?");
      const url = base + path(c.get("params")) + (query < 0 ? "" : raw.slice(query));
      const started = performance.now();
      const signal = deadlineSignal(options.timeout_ms);
      let response: Response;
      let body: Bytes;
      try {
        response = await exchange(c, url, signal);
        body = await readBody(response, { maxBytes: options.max_response_bytes });
      } catch (error) {
        const ms = Math.round(performance.now() - started);
        services.log.error({
          msg: "upstream failure",
          op: operation.id,
          request_id: c.get("requestId"),
          ms,
          error: errorText(error),
        });
        const refused = !(error instanceof BodyLimitError) && isConnectFailure(error);
        // A write that may have reached the bank has an unknown outcome: idempotency keeps this
        // answer for its X-Request-ID instead of letting a retry execute the write again.
        if (writes && !refused) c.set("outcomeUnknown", true);
        if (isTimeout(error) || signal.aborted) {
          throw unavailable(
            "UPSTREAM_TIMEOUT",
            writes
              ? "The bank did not answer in time; the outcome is unknown, read the resource status before retrying"
              : "The bank did not answer in time",
          );
        }
        if (error instanceof BodyLimitError) {
          throw unavailable(
            "UPSTREAM_UNAVAILABLE",
            writes
              ? "The bank's answer was too large to pass on; the outcome is unknown, read the resource status before retrying"
              : "The bank's answer was too large to pass on",
          );
        }
        throw unavailable(
          "UPSTREAM_UNAVAILABLE",
          !writes || refused
            ? "The bank could not be reached"
            : "The bank broke the connection; the outcome is unknown, read the resource status before retrying",
        );
      }
      if (cutOff(response, body)) {
        services.log.error({ msg: "upstream answer cut off", op: operation.id });
        if (writes) c.set("outcomeUnknown", true);
        throw unavailable(
          "UPSTREAM_UNAVAILABLE",
          writes
            ? "The bank broke the connection; the outcome is unknown, read the resource status before retrying"
            : "The bank broke the connection",
        );
      }
      c.set("upstream", {
        status: response.status,
        ms: Math.round(performance.now() - started),
      });
      // Built as pairs (what Response takes fastest); the headers set here, and the answer's
      // headers the checks decided (X-Request-ID, RateLimit-*), replace the upstream's.
      const answer = c.get("answerHeaders");
      const headers: [string, string][] = [];
      let json = false;
      response.headers.forEach((value, name) => {
        if (stripResponse.has(name) || answer?.some((entry) => entry[0] === name)) return;
        if (name === "content-type") json = value.includes("json");
        headers.push([name, value]);
      });
      headers.push(["x-content-type-options", "nosniff"]);
      if (noStore) headers.push(["cache-control", "no-store"]);
      if (answer) headers.push(...answer);
      const empty = response.status === 204 || response.status === 304 || body.byteLength === 0;
      const filters = c.get("responseFilters");
      let passed: Bytes | string | null = empty ? null : body;
      if (!empty && filters && json) {
        const text = utf8(body);
        if (text === undefined) {
          // Decoding would turn the invalid bytes into U+FFFD: the answer passes as the bank sent it.
          services.log.info({
            level: "warn",
            msg: "links not rewritten: the answer is not valid UTF-8",
            op: operation.id,
            request_id: c.get("requestId"),
          });
        } else {
          let filtered: string | undefined;
          for (const filter of filters) filtered = filter(filtered ?? text) ?? filtered;
          if (filtered !== undefined) passed = filtered;
        }
      }
      const answered = new Response(passed, { status: response.status, headers });
      c.set("proxied", answered);
      return answered;
    };
  },
});
