/**
 * The checks in the order they run (one visible list) and the terminal handler after them: the
 * policy is resolved with them and each operation's chain is built from them.
 *
 * request -> route (catalogue) -> offered service -> header rules -> who is calling -> body -> signature -> body rules
 * -> consent scope -> basket scope -> idempotency -> rate limits -> consent frequency -> links -> catalogue cache
 * -> circuit -> upstream limits -> proxy (terminal) -> response
 */
import type { Check } from "../src/core/check.ts";
import type { Pipeline } from "../src/core/chain.ts";
import { service } from "./service.ts";
import { deprecation } from "./deprecation.ts";
import { bodyLimit } from "./body_limit.ts";
import { tppCertificate } from "./tpp_certificate.ts";
import { bearerToken } from "./bearer_token.ts";
import { authorization } from "./authorization.ts";
import { tppUris } from "./tpp_uris.ts";
import { digest } from "./digest.ts";
import { jwsSignature } from "./jws_signature.ts";
import { httpSignature } from "./http_signature.ts";
import { links } from "./links.ts";
import { proxy } from "./proxy.ts";
import { headerLimits } from "./header_limits.ts";
import { requestId } from "./request_id.ts";
import { pathParams } from "./path_params.ts";
import { queryParams } from "./query_params.ts";
import { contentType } from "./content_type.ts";
import { accept } from "./accept.ts";
import { psuIpAddress } from "./psu_ip_address.ts";
import { psuGeoLocation } from "./psu_geo_location.ts";
import { psuDeviceId } from "./psu_device_id.ts";
import { psuHttpMethod } from "./psu_http_method.ts";
import { psuIpPort } from "./psu_ip_port.ts";
import { tppFlags } from "./tpp_flags.ts";
import { tppRedirectUri } from "./tpp_redirect_uri.ts";
import { tppNotificationContent } from "./tpp_notification_content.ts";
import { consentId } from "./consent_id.ts";
import { signaturePairing } from "./signature_pairing.ts";
import { bodySchema } from "./body_schema.ts";
import { idempotency } from "./idempotency.ts";
import { rateLimit } from "./rate_limit.ts";
import { consentFrequency } from "./consent_frequency.ts";
import { consentScope } from "./consent_scope.ts";
import { basketScope } from "./basket_scope.ts";
import { catalogueCache } from "./catalogue_cache.ts";
import { upstreamCircuit } from "./upstream_circuit.ts";
import { upstreamLimits } from "./upstream_limits.ts";

/** Every check in the order it runs. */
export const CHECKS = [
  // What the bank offers: a service switched off answers before anything else.
  service,
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
  authorization,
  tppUris,
  bodyLimit,
  // Who is calling: Digest and request signatures.
  digest,
  jwsSignature,
  httpSignature,
  // Request hardening: body rules.
  bodySchema,
  // Consent scope: account reads outside the consent refused before any count is taken.
  consentScope,
  // Basket scope: a signing basket of another TPP's payments, consents or basket refused.
  basketScope,
  // Shared state: idempotency, rate limits, consent frequency (one store decision together).
  idempotency,
  rateLimit,
  consentFrequency,
  links,
  // Protecting the core: the product catalogue from memory, the circuit breaker, then
  // concurrency limits, around the proxy.
  catalogueCache,
  upstreamCircuit,
  upstreamLimits,
] as const satisfies readonly Check[];

/** The checks, then the terminal handler: the proxy answers with the core's answer. */
export const PIPELINE: Pipeline = { checks: CHECKS, terminal: proxy };
