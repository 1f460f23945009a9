/**
 * The middleware order (one visible list) and the assembly of each operation's chain, built once
 * at start-up from the resolved policy.
 *
 * request -> route (catalogue) -> header rules -> who is calling -> body -> signature -> body rules
 * -> idempotency -> rate limits -> consent frequency -> links -> proxy (terminal) -> response
 */
import type { BuildContext, Check, Finding, Middleware, Mode } from "./check.ts";
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

/**
 * Wraps a check by its mode: a rejection (a {@link GatewayError} thrown before the check passed
 * the request on) is recorded as a finding; in `report` mode the request then goes on.
 */
function withMode(key: string, mode: Mode, middleware: Middleware): Middleware {
  return async (c, next) => {
    let passed = false;
    const pass = () => {
      passed = true;
      return next();
    };
    try {
      return await middleware(c, pass);
    } catch (error) {
      if (passed || !(error instanceof GatewayError)) throw error;
      c.get("findings").push(finding(key, mode, error));
      if (mode === "enforce") throw error;
      await next();
    }
  };
}

/** Builds one operation's chain: each factory runs once, with that operation's options. */
export function buildChain(
  options: Record<string, Record<string, unknown>>,
  context: BuildContext,
): Middleware[] {
  const chain: Middleware[] = [];
  for (const check of CHECKS) {
    const resolved = options[check.key];
    const mode = resolved.mode as Mode | undefined;
    if (mode === "off") continue;
    const middleware = check.create(resolved, context);
    if (!middleware) continue;
    chain.push(withMode(check.key, mode ?? "enforce", middleware));
  }
  return chain;
}
