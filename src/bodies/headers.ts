/**
 * The formats of the interface's request headers, in one place: the header checks test values
 * with these patterns, and the published contract (`GET /openapi.json`) describes the headers with
 * the same patterns, so the two cannot drift apart.
 */
import { SAFE_ID, UUID } from "../lib/ids.ts";

/** The interface's header names as its documents write them. */
const NAMES = [
  "X-Request-ID",
  "Digest",
  "x-jws-signature",
  "Signature",
  "TPP-Signature-Certificate",
  "Authorization",
  "Content-Type",
  "Accept",
  "Consent-ID",
  "PSU-ID",
  "PSU-ID-Type",
  "PSU-Corporate-ID",
  "PSU-Corporate-ID-Type",
  "PSU-IP-Address",
  "PSU-IP-Port",
  "PSU-Accept",
  "PSU-Accept-Charset",
  "PSU-Accept-Encoding",
  "PSU-Accept-Language",
  "PSU-User-Agent",
  "PSU-Http-Method",
  "PSU-Device-ID",
  "PSU-Geo-Location",
  "TPP-Redirect-Preferred",
  "TPP-Decoupled-Preferred",
  "TPP-Redirect-URI",
  "TPP-Nok-Redirect-URI",
  "TPP-Explicit-Authorisation-Preferred",
  "TPP-Rejection-NoFunds-Preferred",
  "TPP-Brand-Logging-Information",
  "TPP-Notification-URI",
  "TPP-Notification-Content-Preferred",
];
const DISPLAY = new Map(NAMES.map((name) => [name.toLowerCase(), name]));

/** The header's name as the interface documents write it, for `path`, texts and the contract. */
export function displayName(name: string): string {
  return DISPLAY.get(name) ?? name.replace(/(^|-)([a-z])/g, (_, dash, c) => dash + c.toUpperCase());
}

/** PSU-Http-Method values. */
export const PSU_HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** PSU-IP-Port: a port number without leading zeros (its range is checked besides). */
export const PORT = /^[1-9][0-9]{0,4}$/;

/** TPP-Notification-Content-Preferred values. */
export const NOTIFICATION_CONTENT = ["SCA", "PROCESS", "LAST"] as const;

/** PSU-Geo-Location, with six longitude decimals or any number of them. */
export function geoPattern(longitudeSixDecimals: boolean): RegExp {
  const decimals = longitudeSixDecimals ? "{6}" : "+";
  return new RegExp(`^GEO:(-?[0-9]{1,2}\\.[0-9]{6});(-?[0-9]{1,3}\\.[0-9]${decimals})$`);
}

/** A JSON Schema (2020-12) object. */
export type JsonSchema = Record<string, unknown>;

/** The policy options a header's format depends on. */
export interface HeaderFormatOptions {
  /** `header_limits.caps`, lower-case names. */
  caps: Record<string, number>;
  /** `header_limits.max_header_bytes`. */
  maxHeaderBytes: number;
  /** `consent_id.max_length`. */
  consentIdLength: number;
  /** `psu_ip_address.allow_ipv6`. */
  ipv6: boolean;
  /** `psu_geo_location.longitude_six_decimals`. */
  longitudeSixDecimals: boolean;
  /** `tpp_redirect_uri.allow_http`. */
  allowHttp: boolean;
}

const UUID_SCHEMA = {
  type: "string",
  format: "uuid",
  pattern: UUID.source,
  examples: ["99391c7e-ad88-49ec-a2ad-99ddcb1f7721"],
};

/** The JSON Schema of a request header's value, as the gateway's checks judge it. */
export function headerSchema(name: string, options: HeaderFormatOptions): JsonSchema {
  const cap = options.caps[name];
  const text = { type: "string", maxLength: cap ?? options.maxHeaderBytes };
  switch (name) {
    case "x-request-id":
    case "psu-device-id":
      return UUID_SCHEMA;
    case "consent-id":
      return { type: "string", maxLength: options.consentIdLength, pattern: SAFE_ID.source };
    case "psu-ip-address":
      return options.ipv6
        ? { type: "string", anyOf: [{ format: "ipv4" }, { format: "ipv6" }] }
        : { type: "string", format: "ipv4", examples: ["192.168.8.78"] };
    case "psu-ip-port":
      return { type: "string", pattern: PORT.source, examples: ["443"] };
    case "psu-http-method":
      return { type: "string", enum: [...PSU_HTTP_METHODS] };
    case "psu-geo-location":
      return {
        type: "string",
        pattern: geoPattern(options.longitudeSixDecimals).source,
        examples: ["GEO:41.716667;44.783333"],
      };
    case "tpp-redirect-preferred":
    case "tpp-decoupled-preferred":
    case "tpp-explicit-authorisation-preferred":
    case "tpp-rejection-nofunds-preferred":
      return { type: "boolean", description: "true or false (any letter case is read the same)" };
    case "tpp-redirect-uri":
    case "tpp-nok-redirect-uri":
    case "tpp-notification-uri":
      return {
        ...text,
        format: "uri",
        pattern: options.allowHttp ? "^[Hh][Tt][Tt][Pp][Ss]?://" : "^[Hh][Tt][Tt][Pp][Ss]://",
      };
    case "tpp-notification-content-preferred": {
      const value = `(${NOTIFICATION_CONTENT.join("|")})`;
      return {
        type: "string",
        pattern: `^status=${value}(, ?${value}){0,2}$`,
        examples: ["status=SCA,PROCESS"],
      };
    }
    case "digest":
      return {
        type: "string",
        pattern: "^[A-Za-z0-9-]+=",
        examples: ["SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="],
      };
    default:
      return text;
  }
}
