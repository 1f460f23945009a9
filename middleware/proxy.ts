/**
 * `proxy`: the terminal handler. Forwards the request (the bytes `body_limit` read) to the
 * operation's upstream path, with only the headers the catalogue lists for the operation (and a
 * few every operation needs, and the policy's own list), hop-by-hop and internal headers stripped
 * both ways, a deadline on the whole exchange, and upstream failures turned into Berlin Group
 * errors. Writes are never retried; a read may be retried once after a connection error.
 *
 * The options are compiled once per operation into a frozen {@link ProxyConfig}; each request is
 * plain functions over it (forwarding itself is src/upstream/forward.ts).
 */
import { z } from "zod";
import { errorText } from "../src/lib/mask.ts";
import type { Finding, GatewayContext } from "../src/core/check.ts";
import type { Answer } from "../src/core/answer.ts";
import { defineTerminal } from "../src/core/chain.ts";
import { fromTerminator, headerList, peerAddress } from "../src/core/request.ts";
import type {} from "./tpp_certificate.ts"; // tppCertificate, tppCertificateHeader
import { byteSize, duration, headerName, TIMER_MAX } from "../src/lib/fields.ts";
import { upstreamTemplate } from "../src/psd2/catalogue.ts";
import type { Services } from "../src/core/services.ts";
import type { Upstream, UpstreamAnswer } from "../src/upstream/mod.ts";
import { displayName } from "./_headers.ts";
import {
  ALWAYS_FORWARDED,
  answerHeaders,
  CERTIFICATE_HEADERS,
  compileRoute,
  cutOff,
  encodedAnswer,
  exchange,
  failure,
  forwardedHeaders,
  HOP_BY_HOP,
  INTERNAL,
  type Route,
  upstreamTarget,
} from "../src/upstream/forward.ts";
import { endOfTurn } from "../src/lib/turn.ts";
import { coreErrorAnswer, loggedBody } from "./_core_errors.ts";

/** What the proxy does for one operation, decided at start-up. */
interface ProxyConfig {
  /** The operation id, for the log. */
  op: string;
  route: Readonly<Route>;
  upstream: Upstream;
  log: Services["log"];
  /**
   * Request headers forwarded: the operation's, those every operation needs, the policy's; never
   * a certificate header (the verified one is added per request).
   */
  forward: ReadonlySet<string>;
  /** Log each request header left out as a finding. */
  reportUnlisted: boolean;
  /** Request headers never forwarded. */
  stripRequest: ReadonlySet<string>;
  /** Answer headers passed on: the operation's, the policy's, less those hidden. */
  answerAllow: ReadonlySet<string>;
  /** Whether the answer gets `Cache-Control: no-store`. */
  noStore: boolean;
  /** Pass a core's 5xx on as it is, instead of the gateway's own error. */
  passCoreErrors: boolean;
}

export const proxy = defineTerminal({
  key: "proxy",
  description: "Forwards the request to the upstream and returns its answer",
  options: z.object({
    timeout: duration({ max: TIMER_MAX }).prefault("10s").describe(
      "Deadline for the whole upstream exchange (request, answer and its body), in milliseconds (kept to within 50 ms)",
    ),
    retry_reads: z.boolean().default(true).describe(
      "Retry a GET once when the connection to the upstream fails before any answer (writes are never retried)",
    ),
    max_response_bytes: byteSize().default(10_485_760).describe(
      "Largest upstream response body passed on; larger answers become 503 UPSTREAM_UNAVAILABLE",
    ),
    answer_headers: z.array(headerName()).default([]).describe(
      "Further upstream answer headers to pass on. Passed anyway: those the interface defines for the operation (X-Request-ID, Content-Type, Retry-After; Location, ASPSP-SCA-Approach, ASPSP-Notification-Support and -Content where they apply); every other header of the upstream is dropped",
    ),
    hide_headers: z.array(headerName()).default([]).describe(
      "Upstream answer headers to remove even when passed otherwise (Server, X-Powered-By and hop-by-hop ones always are)",
    ),
    no_store: z.enum(["sensitive", "always", "never"]).default("sensitive").describe(
      "Add Cache-Control: no-store to account and payment data (sensitive), to every answer, or never",
    ),
    forward_headers: z.array(headerName()).default([]).describe(
      "Further request headers to forward to the upstream. Forwarded anyway: the headers the interface lists for the operation, Accept, Content-Type, Date, traceparent, tracestate, the one header in which tpp_certificate verified the certificate, and the gateway's X-Forwarded-For and X-Forwarded-Proto; every other header is dropped. Never forwarded: other certificate headers, and X-Forwarded-* of a peer that is not a TLS terminator",
    ),
    unlisted_headers: z.enum(["drop", "report"]).default("drop").describe(
      "Request headers that are not forwarded: drop them (silently), or drop them and log each as a finding (report), to see what clients send",
    ),
    core_errors: z.enum(["replace", "pass"]).default("replace").describe(
      "A 5xx of the core: replace it with the gateway's Berlin Group error (503 UPSTREAM_UNAVAILABLE for 502, 503 and 504, with the core's Retry-After when valid; 500 INTERNAL_ERROR for the others) and log the core's body, cut short; or pass it on as the core made it (its body may name internal hosts)",
    ),
  }).strict(),
  create(options, { operation, services, sections }) {
    const noStore = options.no_store === "always" ||
      (options.no_store === "sensitive" && operation.sensitive);
    const forwarded = [
      ...operation.headers,
      ...ALWAYS_FORWARDED,
      ...options.forward_headers.map((h) => h.toLowerCase()),
    ];
    const config: ProxyConfig = Object.freeze({
      op: operation.id,
      route: compileRoute({
        url: sections.upstream.url,
        template: upstreamTemplate(operation, sections.upstream.prefix),
        method: operation.method,
        timeoutMs: options.timeout,
        retryReads: options.retry_reads,
        maxBytes: options.max_response_bytes,
      }),
      upstream: services.upstream,
      log: services.log,
      forward: allowed(forwarded, [...HOP_BY_HOP, ...CERTIFICATE_HEADERS]),
      reportUnlisted: options.unlisted_headers === "report",
      stripRequest: new Set(HOP_BY_HOP),
      answerAllow: allowed(
        [...operation.answers, ...options.answer_headers.map((h) => h.toLowerCase())],
        [
          ...HOP_BY_HOP,
          ...INTERNAL,
          "content-encoding",
          "x-content-type-options",
          // The gateway's own mark of a replayed answer: the core's would tell a TPP a first
          // execution was a repeat.
          "x-idempotent-replay",
          ...(noStore ? ["cache-control"] : []),
          ...options.hide_headers.map((h) => h.toLowerCase()),
        ],
      ),
      noStore,
      passCoreErrors: options.core_errors === "pass",
    });
    return (c) => forward(c, config);
  },
});

/** The names of `names` that are not in `hidden`. */
function allowed(names: readonly string[], hidden: readonly string[]): ReadonlySet<string> {
  const hide = new Set(hidden);
  return new Set(names.filter((name) => !hide.has(name)));
}

/** Forwards one request and answers with the upstream's answer, or throws the failure's 503. */
async function forward(c: GatewayContext, config: ProxyConfig): Promise<Answer> {
  const { route } = config;
  const url = c.req.url;
  const target = upstreamTarget(route, c.get("params"), url);
  const unlisted: string[] | undefined = config.reportUnlisted ? [] : undefined;
  const headers = forwardedHeaders(headerList(c), {
    allow: config.forward,
    certificate: c.get("tppCertificate") ? c.get("tppCertificateHeader") : undefined,
    fromTerminator: fromTerminator(c),
    strip: config.stripRequest,
    unlisted,
    dropped: c.get("dropHeaders"),
    peerAddress: peerAddress(c),
    https: url.startsWith("https:"),
  });
  if (unlisted?.length) reportUnlisted(c, unlisted);
  // The requests of one turn of the event loop go to the core together (src/lib/turn.ts).
  await endOfTurn();
  const started = performance.now();
  let answer: UpstreamAnswer;
  try {
    answer = await exchange(config.upstream, route, {
      target,
      headers,
      body: c.get("body"),
      started,
    });
  } catch (error) {
    config.log.error({
      msg: "upstream failure",
      op: config.op,
      request_id: c.get("requestId"),
      ms: Math.round(performance.now() - started),
      error: errorText(error),
    });
    const failed = failure(route, error);
    // Idempotency keeps this answer for the X-Request-ID instead of letting a retry execute the
    // write again.
    if (failed.outcomeUnknown) c.set("outcomeUnknown", true);
    throw failed.error;
  }
  return respond(c, config, answer, started);
}

/** Logs each request header the proxy left out as a finding (policy `unlisted_headers: report`). */
function reportUnlisted(c: GatewayContext, names: string[]) {
  const findings = c.get("findings");
  for (const name of new Set(names)) {
    const shown = displayName(name);
    const finding: Finding = {
      check: "proxy",
      mode: "report",
      status: 400,
      code: "FORMAT_ERROR",
      path: shown,
      text: `Header "${shown}" is not forwarded to the bank`,
      dropped: true,
    };
    findings.push(finding);
  }
}

/**
 * The core's answer as the gateway passes it on: its status, its headers that pass, the
 * gateway's own (`nosniff` and, for sensitive data, `no-store`), and its body; a 5xx of the core
 * the gateway's own error unless the policy passes them (`core_errors`). What the checks do to it
 * follows in their answer steps (links, kept answers, ...), which see the core's status in
 * `upstream` either way.
 */
function respond(
  c: GatewayContext,
  config: ProxyConfig,
  answer: UpstreamAnswer,
  started: number,
): Answer {
  const { headers, json, encoded } = answerHeaders(answer.headers, config.answerAllow);
  const unusable = encoded ? encodedAnswer(config.route) : cutOff(config.route, answer, json);
  if (unusable) {
    config.log.error({
      msg: encoded ? "upstream answer encoded" : "upstream answer cut off",
      op: config.op,
    });
    if (unusable.outcomeUnknown) c.set("outcomeUnknown", true);
    throw unusable.error;
  }
  c.set("upstream", {
    status: answer.status,
    ms: Math.round(performance.now() - started),
  });
  if (answer.status >= 500 && !config.passCoreErrors) {
    config.log.error({
      msg: "upstream error answer",
      op: config.op,
      request_id: c.get("requestId"),
      status: answer.status,
      body: loggedBody(answer.body),
    });
    const retryAfter = answer.headers.find((entry) => entry[0] === "retry-after")?.[1];
    return coreErrorAnswer(answer.status, retryAfter);
  }
  if (config.noStore) headers.push(["cache-control", "no-store"]);
  const body = answer.body;
  return {
    status: answer.status,
    headers,
    body: body.byteLength === 0 ? null : body,
    source: "core",
  };
}
