/**
 * What a check is: a policy key, a zod options schema and a factory that builds the per-operation
 * middleware once at start-up (Envoy's filter factories, Kong's plugin schemas).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineCheck, modal } from "./check.ts";
 * import { GatewayError } from "../psd2/errors.ts";
 * import { header } from "./request.ts";
 *
 * export const psuGeoLocation = defineCheck({
 *   key: "psu_geo_location",
 *   description: "PSU-Geo-Location must look like GEO:<lat>;<long>",
 *   options: modal({}),
 *   create: () => (c, next) => {
 *     const value = header(c, "psu-geo-location");
 *     if (value !== undefined && !/^GEO:-?\d+(\.\d+)?;-?\d+(\.\d+)?$/.test(value)) {
 *       const text = 'Header "PSU-Geo-Location" must look like GEO:<lat>;<long>';
 *       throw new GatewayError(400, "FORMAT_ERROR", text, { path: "PSU-Geo-Location" });
 *     }
 *     return next();
 *   },
 * });
 * // The options schema gives the defaults; the policy key is a literal type.
 * assert.deepEqual(psuGeoLocation.options.parse({}), { mode: "enforce" });
 * const key: "psu_geo_location" = psuGeoLocation.key;
 * assert.equal(key, "psu_geo_location");
 * ```
 */
import { z } from "zod";
import type { Context, MiddlewareHandler } from "hono";
import type { Operation } from "../psd2/catalogue.ts";
import type { GatewayError } from "../psd2/errors.ts";
import type { Services } from "./services.ts";
import type { PolicySections } from "../sections/sections.ts";
import type { Bytes } from "../lib/body.ts";
import type { DecisionPlan } from "../store/types.ts";
import type { Terminators } from "../lib/terminators.ts";

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

/** Who made an answer. */
export type AnswerSource = "core" | "replay" | "cache" | "gateway";

/** A header of an answer: lower-case name, value. */
export type AnswerHeader = readonly [name: string, value: string];

/**
 * An answer on its way to the TPP (src/core/answer.ts has what works on it). Steps never change
 * one: they return a `changed` copy.
 */
export interface Answer {
  readonly status: number;
  /** Lower-case names, in order; a name may repeat. */
  readonly headers: readonly AnswerHeader[];
  /** The body: bytes as made, text once a step rewrote it, null for none. */
  readonly body: Bytes | string | null;
  readonly source: AnswerSource;
  /** The answer as its source made it, before any step changed it; absent on that answer itself. */
  readonly made?: Answer;
}

/**
 * A check's step on the answer: returns the changed answer, or nothing to leave it as it is. It
 * runs on every answer of the operation, whichever made it; what it does depends on the answer
 * and on what the check's request step left in the context, never on which path was taken.
 */
export type AnswerStep = (
  c: GatewayContext,
  answer: Answer,
) => Answer | void | Promise<Answer | void>;

/** What the app sets for every request before the chain runs (`src/http/app.ts`). */
export interface RouteVariables {
  /** The operation this request was routed to. */
  op: Operation;
  /** The path parameters, decoded. */
  params: Record<string, string>;
  /** The X-Request-ID header as sent ("" when absent). */
  requestId: string;
  /** The request body, read once with the size limit (empty until `body_limit` ran). */
  body: Bytes;
  /** True when PSU-IP-Address is present and valid: the PSU initiated the request. */
  psuInitiated: boolean;
  /** Violations seen so far, for the access log. */
  findings: Finding[];
  /** The policy's TLS terminators (`trust.terminators`), set by the app for every request. */
  terminators?: Terminators;
}

/** Who is calling: set by the checks that identify a TPP, logged by the access log. */
export interface IdentityVariables {
  /** The calling TPP, when known. */
  tpp?: TppIdentity;
}

/** What the terminal handler (the proxy) leaves for the checks around it and the access log. */
export interface ForwardVariables {
  /** A write failed after it may have reached the upstream: its outcome is unknown. */
  outcomeUnknown?: boolean;
  /** Upstream status and latency, once the proxy ran. */
  upstream?: { status: number; ms: number };
}

/**
 * Every per-request value, in Hono's context variables: the kernel's own, joined with one
 * `...Variables` type per feature. A module that owns values declares their type next to the
 * code that sets them and merges it into this interface (Hono's `RequestIdVariables` pattern;
 * marked `ignore` because `deno test --doc` runs an example inside a test function, where a
 * module augmentation cannot stand; `middleware/digest.ts` is the running instance):
 *
 * ```ts ignore
 * export interface DigestVariables { digestVerified?: boolean }
 * declare module "../src/core/check.ts" {
 *   interface GatewayVariables extends DigestVariables {}
 * }
 * ```
 *
 * A module that reads another's value imports that owner's type, which brings the merge along.
 */
export interface GatewayVariables extends RouteVariables, IdentityVariables, ForwardVariables {}

export type GatewayEnv = { Variables: GatewayVariables };
export type GatewayContext = Context<GatewayEnv>;
export type Middleware = MiddlewareHandler<GatewayEnv>;

/**
 * Records a violation as a finding of the check that reports it, without stopping the request
 * (an error it throws instead is recorded by the chain); `dropped` when the offending header was
 * dropped from the forwarded request instead of rejected.
 */
export type Report = (
  c: GatewayContext,
  error: GatewayError,
  details?: { dropped?: boolean },
) => void;

/** What a factory gets besides its options. */
export interface BuildContext {
  operation: Operation;
  services: Services;
  /** The policy's global sections (upstream, store, ...). */
  sections: PolicySections;
  /** The operation's one store decision, whose parts the checks of shared state fill in. */
  decisions: DecisionPlan<GatewayContext>;
  /** Records a finding of this check and mode (the chain binds both). */
  report: Report;
}

/**
 * What a check does to one operation's requests and answers (Envoy's decoder and encoder filter):
 * `request` runs on the way in, in check order, and passes the request on with `next()`, stops it
 * by throwing, or answers it itself with `localReply`; `answer` runs on the way out, in reverse
 * check order, on every answer the operation gives (src/core/answer.ts). A check with a request
 * step only may return the step itself.
 */
export interface Stage {
  request?: Middleware;
  answer?: AnswerStep;
}

/** A check: policy key, options schema and factory. */
export interface Check<
  Shape extends z.ZodRawShape = z.ZodRawShape,
  Key extends string = string,
  Made extends Middleware | Stage = Middleware | Stage,
> {
  /** The policy key, also the module and test file stem. */
  key: Key;
  /** One line for `policy:explain` and the README. */
  description: string;
  /** Options; no refinements here (levels are validated field by field). */
  options: z.ZodObject<Shape>;
  /**
   * Cross-field rules on the resolved options, and rules on the operation they are resolved for
   * (a cache only for public data); each returned string is one problem.
   */
  validate?(options: z.output<z.ZodObject<Shape>>, operation: Operation): string[];
  /**
   * Builds what the check does for one operation (its request step, or a {@link Stage}), or
   * `undefined` when the check does not apply.
   */
  create(
    options: z.output<z.ZodObject<Shape>>,
    context: BuildContext,
  ): Made | undefined;
}

/** Declares a check (identity function that keeps the option types, the key and what it makes). */
export function defineCheck<
  Shape extends z.ZodRawShape,
  Key extends string,
  Made extends Middleware | Stage,
>(
  check: Check<Shape, Key, Made>,
): Check<Shape, Key, Made> {
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
