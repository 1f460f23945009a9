/**
 * What a check is: a policy key, a zod options schema and a factory that builds the per-operation
 * middleware once at start-up (Envoy's filter factories, Kong's plugin schemas).
 *
 * @example
 * export const psuGeoLocation = defineCheck({
 *   key: "psu_geo_location",
 *   description: "PSU-Geo-Location must look like GEO:<lat>;<long>",
 *   options: modal({}),
 *   create: () => (c, next) => { ...; return next(); },
 * });
 */
import { z } from "zod";
import type { Context, MiddlewareHandler } from "hono";
import type { Operation } from "./catalogue.ts";
import type { Services } from "./services.ts";
import type { PolicySections } from "./sections.ts";
import type { Bytes } from "./body.ts";
import type { DecisionOutcome } from "./shared_state.ts";
import { GatewayError } from "./errors.ts";
import type { CertificateInfo } from "./pki/certificate.ts";

/** How a check acts on a violation: reject, log and forward, or not run at all. */
export const MODES = ["enforce", "report", "off"] as const;
export type Mode = typeof MODES[number];

/** A rule violation seen by a check, rejected (enforce) or only reported. */
export interface Finding {
  check: string;
  mode: Mode;
  status: number;
  code: string;
  path?: string;
  text: string;
  /** True when the offending header was dropped from the forwarded request instead. */
  dropped?: boolean;
}

/** The TPP calling, once a check has established it. */
export interface TppIdentity {
  /** The TPP id (organizationIdentifier, or the token's client id). */
  id: string;
  /** PSD2 roles, for example `PSP_PI`. */
  roles: string[];
  /** DNS names of the TPP's certificate (CN and SubjectAltName). */
  domains: string[];
}

/** A rewrite of a JSON response text; `undefined` means unchanged. */
export type ResponseFilter = (text: string) => string | undefined;

/** Per-request values that checks share, in Hono's context variables. */
export interface GatewayVariables {
  /** The operation this request was routed to. */
  op: Operation;
  /** The path parameters, decoded. */
  params: Record<string, string>;
  /** The X-Request-ID header as sent ("" when absent). */
  requestId: string;
  /** The request body, read once with the size limit (empty until `body_limit` ran). */
  body: Bytes;
  /** Violations seen so far, for the access log. */
  findings: Finding[];
  /** The calling TPP, when known. */
  tpp?: TppIdentity;
  /** True when PSU-IP-Address is present and valid: the PSU initiated the request. */
  psuInitiated: boolean;
  /** Request headers (lower case) the proxy must not forward, for example a malformed ignorable one. */
  dropHeaders?: Set<string>;
  /** A write failed after it may have reached the upstream: its outcome is unknown. */
  outcomeUnknown?: boolean;
  /** Upstream status and latency, once the proxy ran. */
  upstream?: { status: number; ms: number };
  /** The connection peer's address ("" when unknown), once `clientAddress()` ran. */
  clientAddress?: string;
  /** The request headers read once, when `requestHeaders()` or `headerList()` first ran. */
  headerLookup?: HeaderPairs;
  /** The request body parsed as JSON, once `jsonBody()` ran. */
  json?: unknown;
  /**
   * Rewrites of the upstream's JSON answer, applied in order by the proxy before it builds the
   * response (Envoy's encoder filters); each returns the new text or `undefined` for no change.
   */
  responseFilters?: ResponseFilter[];
  /** The TPP's transport certificate, once `tpp_certificate` verified it. */
  tppCertificate?: CertificateInfo;
  /** True once the Digest header was checked against the body bytes. */
  digestVerified?: boolean;
  /** The shared-state decision of this request, asked of the store once (src/shared_state.ts). */
  decision?: Promise<DecisionOutcome>;
  /** Headers of the answer decided before it exists; see {@link answerHeader}. */
  answerHeaders?: [string, string][];
  /** The response the proxy built, with the answer headers already in it. */
  proxied?: Response;
}

export type GatewayEnv = { Variables: GatewayVariables };
export type GatewayContext = Context<GatewayEnv>;
export type Middleware = MiddlewareHandler<GatewayEnv>;

/** What a factory gets besides its options. */
export interface BuildContext {
  operation: Operation;
  services: Services;
  /** The policy's global sections (upstream, store, ...). */
  sections: PolicySections;
}

/** A check: policy key, options schema and factory. */
export interface Check<Shape extends z.ZodRawShape = z.ZodRawShape> {
  /** The policy key, also the module and test file stem. */
  key: string;
  /** One line for `policy:explain` and the README. */
  description: string;
  /** Options; no refinements here (levels are validated field by field). */
  options: z.ZodObject<Shape>;
  /** Cross-field rules on the resolved options; each returned string is one problem. */
  validate?(options: z.output<z.ZodObject<Shape>>): string[];
  /** Builds the middleware for one operation, or `undefined` when the check does not apply. */
  create(
    options: z.output<z.ZodObject<Shape>>,
    context: BuildContext,
  ): Middleware | undefined;
}

/** Declares a check (identity function that keeps the option types). */
export function defineCheck<Shape extends z.ZodRawShape>(check: Check<Shape>): Check<Shape> {
  return check;
}

/** The `mode` field every check has. */
export function modeField(fallback: Mode = "enforce") {
  return z.enum(MODES).default(fallback).describe(
    "enforce: reject violations; report: log them and forward; off: do not run",
  );
}

/** An options object with a `mode` field in front. */
export function modal<Shape extends z.ZodRawShape>(shape: Shape, fallback: Mode = "enforce") {
  return z.object({ mode: modeField(fallback), ...shape }).strict();
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

/** What the checks read request headers through: `Headers` has it, and {@link requestHeaders}. */
export interface HeaderLookup {
  /** The value (several joined by ", "), or null when absent. */
  get(name: string): string | null;
  has(name: string): boolean;
}

/** Lookups in a list of lower-case name/value pairs with one entry per name. */
export class HeaderPairs implements HeaderLookup {
  constructor(readonly list: [string, string][]) {}

  get(name: string): string | null {
    const lower = name.toLowerCase();
    for (const entry of this.list) if (entry[0] === lower) return entry[1];
    return null;
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }
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
 * Headers as name/value pairs, in the order iteration gives. `forEach` is used because Deno's
 * `Headers` iterator costs about seven times as much (measured: 6.0 against 0.8 us for six headers).
 */
export function pairs(headers: Headers): [string, string][] {
  const list: [string, string][] = [];
  headers.forEach((value, name) => {
    list.push([name, value]);
  });
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
