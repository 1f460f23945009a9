/**
 * `proxy`: the terminal handler. Forwards the request (the bytes `body_limit` read) to the
 * operation's upstream path, with hop-by-hop and internal headers stripped both ways, a deadline
 * on the whole exchange, and upstream failures turned into Berlin Group errors. Writes are never
 * retried; a read may be retried once after a connection error.
 */
import { z } from "zod";
import { errorText } from "../src/lib/mask.ts";
import { defineCheck, type GatewayContext } from "../src/core/check.ts";
import { headerList, peerAddress } from "../src/core/request.ts";
import { upstreamTemplate } from "../src/core/catalogue.ts";
import type { Bytes } from "../src/lib/body.ts";
import { formatError, GatewayError } from "../src/core/errors.ts";
import { type UpstreamAnswer, UpstreamError } from "../src/upstream/mod.ts";
import { byteSize, duration, headerName, TIMER_MAX } from "../src/policy/fields.ts";
import { RETRY_AFTER_SECONDS } from "../src/core/retry_after.ts";

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

/** What a write's failure text adds when the write may have reached the bank. */
const OUTCOME_UNKNOWN = "; the outcome is unknown, read the resource status before retrying";

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

function forwardedHeaders(c: GatewayContext, strip: Set<string>): [string, string][] {
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
  const address = peerAddress(c);
  const chain = address ? (forwardedFor ? `${forwardedFor}, ${address}` : address) : forwardedFor;
  if (chain) headers.push(["x-forwarded-for", chain]);
  if (!forwardedProto) {
    headers.push(["x-forwarded-proto", c.req.url.startsWith("https:") ? "https" : "http"]);
  }
  return headers;
}

function unavailable(code: "UPSTREAM_UNAVAILABLE" | "UPSTREAM_TIMEOUT", text: string) {
  return new GatewayError(503, code, text, {
    headers: { "retry-after": String(RETRY_AFTER_SECONDS.upstreamUnavailable) },
  });
}

/**
 * An answer framed only by the end of its connection (no Content-Length, not chunked) looks
 * complete when the connection is cut; a JSON one that does not parse was cut off.
 */
function cutOff(answer: UpstreamAnswer, json: boolean): boolean {
  if (!answer.closeDelimited || answer.body.byteLength === 0 || !json) return false;
  try {
    JSON.parse(decoder.decode(answer.body));
    return false;
  } catch {
    return true;
  }
}

/** Decodes with replacement: a third of the strict decoder's cost, which runs only after it. */
const lenientDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** The text of a UTF-8 body, or undefined when its bytes are not UTF-8. */
function utf8(body: Bytes): string | undefined {
  const text = lenientDecoder.decode(body);
  // Without a U+FFFD in the text, nothing was replaced; with one, it may be the bank's own.
  if (!text.includes("\uFFFD")) return text;
  try {
    return strictDecoder.decode(body);
  } catch {
    return undefined;
  }
}

export const proxy = defineCheck({
  key: "proxy",
  description: "Forwards the request to the upstream and returns its answer",
  options: z.object({
    timeout: duration({ max: TIMER_MAX }).prefault("10s").describe(
      "Deadline for the whole upstream exchange (request, answer and its body), for example 10s (kept to within 50 ms)",
    ),
    retry_reads: z.boolean().default(true).describe(
      "Retry a GET once when the connection to the upstream fails before any answer (writes are never retried)",
    ),
    max_response_bytes: byteSize().default(10_485_760).describe(
      "Largest upstream response body passed on; larger answers become 503 UPSTREAM_UNAVAILABLE",
    ),
    hide_headers: z.array(headerName()).default([]).describe(
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
    const upstream = services.upstream;
    const { origin, pathname } = new URL(base);
    const prefix = pathname.replace(/\/+$/, "");

    /**
     * What is left of the deadline for a retry, in whole tenths of a second: deadlines share
     * timers by their length (src/deadline.ts), so lengths must come from a small set.
     */
    function remaining(started: number): number {
      const left = options.timeout - (performance.now() - started);
      return Math.max(100, Math.ceil(left / 100) * 100);
    }

    /** The exchange, a GET retried once when the connection failed before any answer. */
    async function exchange(
      c: GatewayContext,
      target: string,
      started: number,
    ): Promise<UpstreamAnswer> {
      for (let attempt = 0;; attempt++) {
        try {
          return await upstream.send({
            method,
            origin,
            target,
            headers: forwardedHeaders(c, stripRequest),
            body: writes ? c.get("body") : undefined,
            timeoutMs: attempt === 0 ? options.timeout : remaining(started),
            maxBytes: options.max_response_bytes,
          });
        } catch (error) {
          const early = error instanceof UpstreamError &&
            (error.failure === "refused" || error.failure === "reset");
          if (!early || attempt >= retries) throw error;
        }
      }
    }

    /** The 503 of a failed exchange; a write that may have reached the bank has an unknown outcome. */
    function failed(c: GatewayContext, error: unknown): GatewayError {
      const failure = error instanceof UpstreamError ? error.failure : "broken";
      // Idempotency keeps this answer for the X-Request-ID instead of letting a retry execute
      // the write again.
      if (writes && failure !== "refused") c.set("outcomeUnknown", true);
      if (failure === "timeout") {
        return unavailable(
          "UPSTREAM_TIMEOUT",
          `The bank did not answer in time${writes ? OUTCOME_UNKNOWN : ""}`,
        );
      }
      if (failure === "too_large") {
        return unavailable(
          "UPSTREAM_UNAVAILABLE",
          `The bank's answer was too large to pass on${writes ? OUTCOME_UNKNOWN : ""}`,
        );
      }
      if (!writes || failure === "refused") {
        return unavailable("UPSTREAM_UNAVAILABLE", "The bank could not be reached");
      }
      return unavailable("UPSTREAM_UNAVAILABLE", `The bank broke the connection${OUTCOME_UNKNOWN}`);
    }

    return async (c) => {
      const raw = c.req.url;
      const query = raw.indexOf("?");
      const target = prefix + path(c.get("params")) + (query < 0 ? "" : raw.slice(query));
      const started = performance.now();
      let response: UpstreamAnswer;
      try {
        response = await exchange(c, target, started);
      } catch (error) {
        services.log.error({
          msg: "upstream failure",
          op: operation.id,
          request_id: c.get("requestId"),
          ms: Math.round(performance.now() - started),
          error: errorText(error),
        });
        throw failed(c, error);
      }
      // Built as pairs (what Response takes fastest); the headers set here, and the answer's
      // headers the checks decided (X-Request-ID, RateLimit-*), replace the upstream's.
      const answer = c.get("answerHeaders");
      const headers: [string, string][] = [];
      let json = false;
      for (const entry of response.headers) {
        const name = entry[0];
        if (stripResponse.has(name) || answer?.some((decided) => decided[0] === name)) continue;
        if (name === "content-type") json = entry[1].includes("json");
        headers.push(entry);
      }
      const body = response.body;
      if (cutOff(response, json)) {
        services.log.error({ msg: "upstream answer cut off", op: operation.id });
        if (writes) c.set("outcomeUnknown", true);
        throw unavailable(
          "UPSTREAM_UNAVAILABLE",
          `The bank broke the connection${writes ? OUTCOME_UNKNOWN : ""}`,
        );
      }
      c.set("upstream", {
        status: response.status,
        ms: Math.round(performance.now() - started),
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
