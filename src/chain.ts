/**
 * The middleware order (one visible list) and the assembly of each operation's chain, built once
 * at start-up from the resolved policy.
 *
 * request -> route (catalogue) -> header rules -> who is calling -> body -> signature -> body rules
 * -> idempotency -> rate limits -> consent frequency -> links -> proxy (terminal) -> response
 */
import type { BuildContext, Check, Finding, GatewayContext, Middleware, Mode } from "./check.ts";
import { GatewayError } from "./errors.ts";
import { deprecation } from "../middleware/deprecation.ts";
import { bodyLimit } from "../middleware/body_limit.ts";
import { tppCertificate } from "../middleware/tpp_certificate.ts";
import { bearerToken } from "../middleware/bearer_token.ts";
import { tppUris } from "../middleware/tpp_uris.ts";
import { digest } from "../middleware/digest.ts";
import { jwsSignature } from "../middleware/jws_signature.ts";
import { httpSignature } from "../middleware/http_signature.ts";
import { links } from "../middleware/links.ts";
import { proxy } from "../middleware/proxy.ts";
import { headerLimits } from "../middleware/header_limits.ts";
import { requestId } from "../middleware/request_id.ts";
import { pathParams } from "../middleware/path_params.ts";
import { queryParams } from "../middleware/query_params.ts";
import { contentType } from "../middleware/content_type.ts";
import { accept } from "../middleware/accept.ts";
import { psuIpAddress } from "../middleware/psu_ip_address.ts";
import { psuGeoLocation } from "../middleware/psu_geo_location.ts";
import { psuDeviceId } from "../middleware/psu_device_id.ts";
import { psuHttpMethod } from "../middleware/psu_http_method.ts";
import { psuIpPort } from "../middleware/psu_ip_port.ts";
import { tppFlags } from "../middleware/tpp_flags.ts";
import { tppRedirectUri } from "../middleware/tpp_redirect_uri.ts";
import { tppNotificationContent } from "../middleware/tpp_notification_content.ts";
import { consentId } from "../middleware/consent_id.ts";
import { signaturePairing } from "../middleware/signature_pairing.ts";
import { bodySchema } from "../middleware/body_schema.ts";
import { idempotency } from "../middleware/idempotency.ts";
import { rateLimit } from "../middleware/rate_limit.ts";
import { consentFrequency } from "../middleware/consent_frequency.ts";

/** Every check in the order it runs; the proxy is the terminal handler. */
export const CHECKS: readonly Check[] = [
  deprecation,
  // Request hardening: header and path rules.
  headerLimits,
  requestId,
  pathParams,
  queryParams,
  contentType,
  accept,
  psuIpAddress,
  psuGeoLocation,
  psuDeviceId,
  psuHttpMethod,
  psuIpPort,
  tppFlags,
  tppRedirectUri,
  tppNotificationContent,
  consentId,
  signaturePairing,
  // Who is calling: certificates, roles, bearer tokens.
  tppCertificate,
  bearerToken,
  tppUris,
  bodyLimit,
  // Who is calling: Digest and request signatures.
  digest,
  jwsSignature,
  httpSignature,
  // Request hardening: body rules.
  bodySchema,
  // Shared state: idempotency, rate limits, consent frequency (one store decision together).
  idempotency,
  rateLimit,
  consentFrequency,
  links,
  proxy,
] as unknown as readonly Check[];

function finding(check: string, mode: Mode, error: GatewayError): Finding {
  return {
    check,
    mode,
    status: error.status,
    code: error.code,
    path: error.path,
    text: error.message,
  };
}

/** One check of an operation's chain and the mode it runs in. */
interface Layer {
  key: string;
  mode: Mode;
  run: Middleware;
}

/** Turns an error into the response (the app's error handler). */
export type ErrorResponder = (error: unknown, c: GatewayContext) => Response;

const DONE: Promise<void> = Promise.resolve();

/**
 * One request's walk through a chain. A check that throws before it passed the request on
 * (called `next`) has its error recorded as a finding; in `report` mode the request then goes on,
 * otherwise the error becomes the response, which the checks before it see as `c.res` (as in
 * Hono's compose: `next()` never rejects). A check that only validates and returns `next()` costs
 * one call: its result is the downstream promise itself and is passed up as it is.
 */
class Walk {
  /** Index of the check running now. */
  #cursor = -1;
  /** Highest index started: a check at index i passed the request on when this exceeds i. */
  #reached = -1;
  /** The promise the latest `dispatch` returned. */
  #last: Promise<void> = DONE;
  readonly next = (): Promise<void> => this.dispatch(this.#cursor + 1);

  constructor(
    readonly c: GatewayContext,
    readonly layers: readonly Layer[],
    readonly respond: ErrorResponder,
  ) {}

  dispatch(i: number): Promise<void> {
    if (i >= this.layers.length) return this.#last = DONE;
    this.#cursor = i;
    if (i > this.#reached) this.#reached = i;
    let result;
    try {
      result = this.layers[i].run(this.c, this.next);
    } catch (error) {
      return this.#last = this.#failed(i, error);
    }
    if (result === this.#last && this.#reached > i) return result as Promise<void>;
    if (result instanceof Response) {
      this.c.res = result;
      return this.#last = DONE;
    }
    if (result === undefined) return this.#last = DONE;
    return this.#last = result.then(
      (response) => {
        if (response instanceof Response) this.c.res = response;
      },
      (error) => this.#failed(i, error),
    );
  }

  #failed(i: number, error: unknown): Promise<void> {
    const layer = this.layers[i];
    if (error instanceof GatewayError && this.#reached === i) {
      this.c.get("findings").push(finding(layer.key, layer.mode, error));
      if (layer.mode === "report") return this.dispatch(i + 1);
    }
    this.c.res = this.respond(error, this.c);
    return DONE;
  }
}

/** An operation's chain, run as one function per request. */
export type Chain = (c: GatewayContext) => Promise<void>;

/** Builds one operation's chain: each factory runs once, with that operation's options. */
export function buildChain(
  options: Record<string, Record<string, unknown>>,
  context: BuildContext,
  respond: ErrorResponder,
): Chain {
  const layers: Layer[] = [];
  for (const check of CHECKS) {
    const resolved = options[check.key];
    const mode = resolved.mode as Mode | undefined;
    if (mode === "off") continue;
    const run = check.create(resolved, context);
    if (run) layers.push({ key: check.key, mode: mode ?? "enforce", run });
  }
  return (c) => new Walk(c, layers, respond).dispatch(0);
}
