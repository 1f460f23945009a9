/**
 * Mutations of valid requests (tests/support/arbitraries.ts) with a documented outcome.
 *
 * `certainMutation(names)`: one change whose outcome the documents pin down (README "Every rule
 * and its error", docs/request_hardening.md): the request carries the status, code and `path` it
 * must be rejected with, or, for a header the interface says may be ignored, that it is forwarded
 * without that header. Arbitrary stacked changes without an expectation: tests/support/chaos.ts.
 */
import fc from "fast-check";
import type { Operation } from "../../src/psd2/catalogue.ts";
import {
  anyValidRequest,
  charsetText,
  type Expectation,
  FRESH_ID,
  type FuzzRequest,
  httpsUri,
  ibanValid,
  isPain,
  jsonBytes,
  PAYMENT_PRODUCTS,
  PAYMENT_SERVICES,
  printable,
  publicRoute,
  queryText,
  render,
  safeId,
  upstreamPathOf,
  type ValidRequest,
} from "./arbitraries.ts";

/** Header names as the interface documents write them (the `path` of a header error). */
export const DISPLAY_NAMES: Record<string, string> = Object.fromEntries(
  [
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
  ].map((name) => [name.toLowerCase(), name]),
);

/** The headers the interface says may be ignored: dropped, not rejected, when malformed. */
export const IGNORABLE = [
  "tpp-decoupled-preferred",
  "tpp-nok-redirect-uri",
  "tpp-explicit-authorisation-preferred",
  "tpp-rejection-nofunds-preferred",
  "tpp-brand-logging-information",
  "tpp-notification-uri",
  "tpp-notification-content-preferred",
];

/** Length caps of the default policy, in characters (other headers: 16384 bytes). */
const CAPS: Record<string, number> = {
  "psu-id": 50,
  "psu-id-type": 50,
  "psu-corporate-id": 50,
  "psu-corporate-id-type": 50,
  "tpp-redirect-uri": 500,
  "tpp-nok-redirect-uri": 500,
  "tpp-brand-logging-information": 255,
};
const MAX_HEADER_BYTES = 16_384;

/** The query parameters each operation defines (000, 001 and the README's choices). */
export function knownQuery(op: Operation): string[] {
  if (op.id === "getTransactionList") {
    return [
      "dateFrom",
      "dateTo",
      "entryReferenceFrom",
      "bookingStatus",
      "deltaList",
      "withBalance",
    ];
  }
  if (op.id === "getCardAccountTransactionList") {
    return ["dateFrom", "dateTo", "entryReferenceFrom", "bookingStatus", "deltaList"];
  }
  if (op.id === "getAccountList" || op.id === "readAccountDetails") return ["withBalance"];
  if (op.id === "calculateInstallment") return ["amount", "client_id"];
  if (op.group === "products" && op.id !== "getProductById") return ["page", "page-size"];
  return [];
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

// ---------------------------------------------------------------------------------------------
// Helpers.

type Headers = [string, string][];

function without(headers: Headers, name: string): Headers {
  return headers.filter(([n]) => n !== name);
}

function withHeader(headers: Headers, name: string, value: string): Headers {
  return [...without(headers, name), [name, value]];
}

function has(headers: Headers, name: string): boolean {
  return headers.some(([n]) => n === name);
}

function reject(status: number, code: string, path?: string): Expectation {
  return { kind: "reject", status, code, path };
}

function badHeader(name: string): Expectation {
  return reject(400, "FORMAT_ERROR", DISPLAY_NAMES[name]);
}

function mutate(
  valid: ValidRequest,
  mutation: string,
  change: Partial<ValidRequest>,
  expect: Expectation,
  extra: { target?: string; method?: string } = {},
): FuzzRequest {
  return render({ ...valid, ...change }, { mutation, expect, ...extra });
}

/** A forward expectation for the changed request (same upstream path as the valid one). */
function forwardedWithout(valid: ValidRequest, dropped: string[]): Expectation {
  return { kind: "forward", upstreamPath: upstreamPathOf(valid), dropped };
}

function pathOf(valid: ValidRequest): string {
  return valid.op.path.replace(/\{([^}]+)\}/g, (_, name) => valid.params[name]);
}

function idParams(op: Operation): string[] {
  return Object.entries(op.params).filter(([, rule]) => !rule.values).map(([name]) => name);
}

function jsonKind(valid: ValidRequest): boolean {
  return valid.op.body !== "none" && !(valid.op.body === "payment" && isPain(valid.params));
}

/** The same path with one parameter written differently, if it still routes to the operation. */
function withParam(valid: ValidRequest, name: string, raw: string): string | undefined {
  const path = valid.op.path.replace(
    /\{([^}]+)\}/g,
    (_, n) => n === name ? raw : valid.params[n],
  );
  const route = publicRoute(valid.op.method, path);
  return route.kind === "op" && route.op.id === valid.op.id ? path : undefined;
}

type Maker = (valid: ValidRequest) => fc.Arbitrary<FuzzRequest | undefined> | undefined;

// Arbitraries drawn from many times, built once (building costs more than drawing).
const LONG_ID = fc.stringMatching(/^[A-Za-z0-9]{129,300}$/);
const LONG_BRAND = fc.stringMatching(/^[a-z]{256,400}$/);
const GARBAGE = printable(1, 200).filter((s) => !s.includes("%"));
const SERVICE_WORD = fc.stringMatching(/^[a-z][a-z0-9-]{0,30}$/);
const PRODUCT_WORD = fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,40}$/);
const LOCALE_WORD = fc.stringMatching(/^[a-z][a-z-]{0,10}$/);
const OVERLONG_ID = fc.stringMatching(/^[A-Za-z0-9_~-]{129,600}$/);
const ID_PART = fc.stringMatching(/^[A-Za-z0-9_~-]{0,10}$/);
const SEGMENT_WORD = fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/);
const JSON_3 = fc.jsonValue({ maxDepth: 3 });
const LONG_NAME = charsetText(71, 200);
const FIELD_NAME = fc.stringMatching(/^[a-zA-Z]{1,15}$/);
const JSON_2 = fc.jsonValue({ maxDepth: 2 });
const QUERY_NAME = fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9_-]{0,15}$/);

// ---------------------------------------------------------------------------------------------
// Mutations with a certain outcome.

const notUuid = fc.oneof(
  printable(1, 100).filter((v) => !UUID.test(v)),
  fc.uuid().map((u) => u.replace(/-/g, "")),
  fc.uuid().map((u) => `${u}0`),
  fc.uuid().map((u) => `{${u}}`),
  fc.uuid().map((u) => u.slice(0, 35) + "g"),
);

const headerMakers: Record<string, Maker> = {
  requestIdNotUuid: (v) =>
    v.op.headers.includes("x-request-id")
      ? notUuid.map((id) =>
        mutate(v, `X-Request-ID "${id}"`, {
          headers: withHeader(v.headers, "x-request-id", id),
        }, badHeader("x-request-id"))
      )
      : undefined,
  requestIdMissing: (v) =>
    v.op.required.includes("x-request-id")
      ? fc.constant(
        mutate(v, "X-Request-ID dropped", {
          headers: without(v.headers, "x-request-id"),
        }, badHeader("x-request-id")),
      )
      : undefined,
  requestIdTwice: (v) =>
    v.op.headers.includes("x-request-id")
      ? fc.constant(
        mutate(v, "X-Request-ID sent twice", {
          headers: [...without(v.headers, "x-request-id"), ["x-request-id", FRESH_ID], [
            "x-request-id",
            FRESH_ID,
          ]],
        }, badHeader("x-request-id")),
      )
      : undefined,
  psuIpMissing: (v) =>
    v.op.required.includes("psu-ip-address")
      ? fc.constant(
        mutate(v, "PSU-IP-Address dropped", {
          headers: without(v.headers, "psu-ip-address"),
        }, badHeader("psu-ip-address")),
      )
      : undefined,
  psuIpInvalid: (v) =>
    v.op.headers.includes("psu-ip-address")
      ? fc.oneof(
        fc.tuple(fc.integer({ min: 256, max: 999 }), fc.nat(255)).map(([a, b]) => `${b}.${a}.1.2`),
        fc.tuple(fc.integer({ min: 0, max: 99 }), fc.nat(255)).map(([a, b]) => `${b}.0${a}.1.2`),
        fc.constantFrom(
          "1.2.3",
          "1.2.3.4.5",
          "2001:db8::g",
          "fe80::1%eth0",
          "localhost",
          "1.2.3.4:80",
        ),
      ).map((ip) =>
        mutate(v, `PSU-IP-Address "${ip}"`, {
          headers: withHeader(v.headers, "psu-ip-address", ip),
        }, badHeader("psu-ip-address"))
      )
      : undefined,
  consentIdMissing: (v) =>
    v.op.required.includes("consent-id")
      ? fc.constant(
        mutate(
          v,
          "Consent-ID dropped",
          { headers: without(v.headers, "consent-id") },
          badHeader(
            "consent-id",
          ),
        ),
      )
      : undefined,
  consentIdUnsafe: (v) =>
    v.op.headers.includes("consent-id")
      ? fc.oneof(
        LONG_ID,
        fc.tuple(safeId, fc.constantFrom(" x", "/x", "%2F", ":x", "@", "\u00c3\u00a9"), safeId)
          .map(([a, b, c]) => (a + b + c).trim()),
        fc.constantFrom(".", ".."),
      ).map((id) =>
        mutate(v, `Consent-ID "${id}"`, {
          headers: withHeader(v.headers, "consent-id", id),
        }, badHeader("consent-id"))
      )
      : undefined,
  geoComma: (v) =>
    v.op.headers.includes("psu-geo-location")
      ? fc.tuple(fc.integer({ min: -89, max: 89 }), fc.integer({ min: -179, max: 179 })).map((
        [lat, long],
      ) => {
        const value = `GEO:${lat}.123456,${long}.5`;
        return mutate(v, `PSU-Geo-Location "${value}"`, {
          headers: withHeader(v.headers, "psu-geo-location", value),
        }, badHeader("psu-geo-location"));
      })
      : undefined,
  deviceIdBad: (v) =>
    v.op.headers.includes("psu-device-id")
      ? notUuid.map((id) =>
        mutate(v, `PSU-Device-ID "${id}"`, {
          headers: withHeader(v.headers, "psu-device-id", id),
        }, badHeader("psu-device-id"))
      )
      : undefined,
  httpMethodBad: (v) =>
    v.op.headers.includes("psu-http-method")
      ? fc.constantFrom("get", "HEAD", "OPTIONS", "CONNECT", "TRACE", "POST ", "P0ST").map((m) =>
        mutate(v, `PSU-Http-Method "${m}"`, {
          headers: withHeader(v.headers, "psu-http-method", m.trim() === m ? m : "PO ST"),
        }, badHeader("psu-http-method"))
      )
      : undefined,
  ipPortBad: (v) =>
    v.op.headers.includes("psu-ip-port")
      ? fc.oneof(
        fc.constantFrom("0", "00080", "65536", "-1", "80a", "1e3"),
        fc.integer({ min: 65536, max: 9_999_999 }).map(String),
      ).map((port) =>
        mutate(v, `PSU-IP-Port "${port}"`, {
          headers: withHeader(v.headers, "psu-ip-port", port),
        }, badHeader("psu-ip-port"))
      )
      : undefined,
  redirectPreferredBad: (v) =>
    v.op.headers.includes("tpp-redirect-preferred")
      ? fc.constantFrom("yes", "1", "t", "true,false").map((flag) =>
        mutate(v, `TPP-Redirect-Preferred "${flag}"`, {
          headers: withHeader(v.headers, "tpp-redirect-preferred", flag),
        }, badHeader("tpp-redirect-preferred"))
      )
      : undefined,
  redirectUriMissing: (v) =>
    v.op.headers.includes("tpp-redirect-preferred")
      ? fc.constant(
        mutate(v, "TPP-Redirect-Preferred true without TPP-Redirect-URI", {
          headers: withHeader(
            without(v.headers, "tpp-redirect-uri"),
            "tpp-redirect-preferred",
            "true",
          ),
        }, badHeader("tpp-redirect-uri")),
      )
      : undefined,
  redirectUriBad: (v) =>
    v.op.headers.includes("tpp-redirect-uri")
      ? badUri.map((uri) =>
        mutate(v, `TPP-Redirect-URI "${uri}"`, {
          headers: withHeader(v.headers, "tpp-redirect-uri", uri),
        }, badHeader("tpp-redirect-uri"))
      )
      : undefined,
  ignorableBad: (v) => {
    const names = IGNORABLE.filter((name) => v.op.headers.includes(name));
    if (names.length === 0) return undefined;
    return fc.constantFrom(...names).chain((name) =>
      (name.endsWith("-uri")
        ? badUri
        : name.endsWith("content-preferred")
        ? fc.constantFrom("SCA", "status=SCA,SCA", "status=sca", "status=", "status=SCA,,LAST")
        : name === "tpp-brand-logging-information"
        ? LONG_BRAND
        : fc.constantFrom("yes", "1", "t")).map((value) => {
          const expect: Expectation = {
            kind: "forward",
            upstreamPath: upstreamPathOf(v),
            dropped: [name],
            ...(name === "tpp-notification-uri"
              ? { headers: { "aspsp-notification-support": "false" } }
              : {}),
          };
          return mutate(v, `${DISPLAY_NAMES[name]} "${value}"`, {
            headers: withHeader(v.headers, name, value),
          }, expect);
        })
    );
  },
  contentTypeWrong: (v) =>
    v.body !== undefined && v.body.length > 0
      ? fc.constantFrom(
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/json; charset=iso-8859-1",
        "application/jsonx",
        "json",
        // A periodic pain.001 may come as a form (its parts are judged by body_schema).
        v.op.body === "payment" && isPain(v.params) && v.params["payment-service"] ===
            "periodic-payments"
          ? "text/html"
          : "multipart/form-data; boundary=x",
        v.op.body === "payment" && isPain(v.params) ? "application/json" : "application/xml",
      ).map((type) =>
        mutate(v, `Content-Type "${type}"`, {
          headers: withHeader(v.headers, "content-type", type),
        }, reject(415, "CONTENT_TYPE_INVALID", "Content-Type"))
      )
      : undefined,
  contentTypeMissing: (v) =>
    has(v.headers, "content-type") && (v.op.required.includes("content-type") ||
        (v.body !== undefined && v.body.length > 0))
      ? fc.constant(
        mutate(
          v,
          "Content-Type dropped",
          { headers: without(v.headers, "content-type") },
          v.op.required.includes("content-type")
            ? badHeader("content-type")
            : reject(415, "CONTENT_TYPE_INVALID", "Content-Type"),
        ),
      )
      : undefined,
  acceptWrong: (v) =>
    fc.constantFrom(
      "text/html",
      "application/json;q=0",
      "text/*",
      "image/png, text/plain;q=0.5",
      ...(v.op.id === "getPaymentInformation" && isPain(v.params) ? [] : ["application/xml"]),
    ).map((accept) =>
      mutate(v, `Accept "${accept}"`, {
        headers: withHeader(v.headers, "accept", accept),
      }, reject(406, "REQUESTED_FORMATS_INVALID", "Accept"))
    ),
  headerControl: (v) => {
    const present = v.headers.map(([n]) => n).filter((n) => DISPLAY_NAMES[n]);
    if (present.length === 0) return undefined;
    return fc.tuple(
      fc.constantFrom(...present),
      // TAB is allowed inside a value (RFC 9110); these are the controls HTTP lets through.
      fc.constantFrom("\x85", "\x9b", "\xc2\x85", "\xc2\x9f", "a\x85b"),
      fc.nat(),
      fc.uuid(),
    ).map(([name, control, at, id]) => {
      const old = v.headers.find(([n]) => n === name)![1];
      const base = old === FRESH_ID ? id : old;
      const cut = base.length < 2 ? base.length : 1 + (at % (base.length - 1));
      const value = base.length < 2
        ? `${base}${control}x`
        : base.slice(0, cut) + control + base.slice(cut);
      const expect = IGNORABLE.includes(name) ? forwardedWithout(v, [name]) : badHeader(name);
      return mutate(v, `${DISPLAY_NAMES[name]} with ${JSON.stringify(control)}`, {
        headers: v.headers.map(([n, old]) => [n, n === name ? value : old]),
      }, expect);
    });
  },
  headerOverlong: (v) =>
    fc.oneof(
      fc.tuple(fc.constantFrom(...Object.keys(CAPS)), fc.integer({ min: 1, max: 300 })).map((
        [name, over],
      ) => {
        const length = CAPS[name] + over;
        const value = name.endsWith("-uri")
          ? `https://tpp.example/${"a".repeat(length - 20)}`
          : "a".repeat(length);
        return { name, value };
      }),
      fc.tuple(
        fc.constantFrom("psu-user-agent", "authorization", "psu-accept-language", "accept"),
        fc.integer({ min: 1, max: 4000 }),
      ).map(([name, over]) => ({ name, value: "a".repeat(MAX_HEADER_BYTES + over) })),
    ).map(({ name, value }) =>
      mutate(v, `${DISPLAY_NAMES[name]} of ${value.length} characters`, {
        headers: withHeader(v.headers, name, value),
      }, IGNORABLE.includes(name) ? forwardedWithout(v, [name]) : badHeader(name))
    ),
  signatureWithoutDigest: (v) =>
    v.op.headers.includes("x-jws-signature")
      ? fc.constant(
        mutate(v, "x-jws-signature without Digest", {
          headers: [...without(v.headers, "digest"), [
            "x-jws-signature",
            "eyJhbGciOiJQUzI1NiJ9..c2ln",
          ]],
        }, badHeader("digest")),
      )
      : undefined,
  digestWithoutSignature: (v) =>
    v.op.headers.includes("digest")
      ? fc.constant(
        mutate(v, "Digest without a signature", {
          headers: [...v.headers, [
            "digest",
            "SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
          ]],
        }, reject(401, "SIGNATURE_MISSING", "x-jws-signature")),
      )
      : undefined,
  certificateGarbage: (v) =>
    GARBAGE.map((garbage) =>
      mutate(v, `X-SSL-Client-Cert "${garbage}"`, {
        headers: [...v.headers, ["x-ssl-client-cert", garbage]],
      }, reject(401, "CERTIFICATE_INVALID"))
    ),
};

const badUri = fc.oneof(
  httpsUri.map((u) => u.replace("https://", "http://")),
  httpsUri.map((u) => u.replace("https://", "https:///")),
  httpsUri.map((u) => u.replace("https://", "https://user:pw@")),
  fc.constantFrom("ftp://tpp.example/x", "/relative/path", "tpp.example", "https:tpp.example"),
);

const pathMakers: Record<string, Maker> = {
  paymentServiceUnknown: (v) =>
    "payment-service" in v.op.params
      ? SERVICE_WORD
        .filter((s) => !(PAYMENT_SERVICES as readonly string[]).includes(s))
        .chain((s) => {
          const path = withParam(v, "payment-service", s);
          return path === undefined ? fc.constant(undefined) : fc.constant(
            mutate(
              v,
              `payment-service "${s}"`,
              {},
              reject(
                400,
                "PARAMETER_NOT_SUPPORTED",
                "payment-service",
              ),
              { target: path + queryText(v.query) },
            ),
          );
        })
      : undefined,
  paymentProductUnknown: (v) =>
    "payment-product" in v.op.params
      ? PRODUCT_WORD
        .filter((s) => !(PAYMENT_PRODUCTS as readonly string[]).includes(s))
        .chain((s) => {
          const path = withParam(v, "payment-product", s);
          return fc.constant(
            path === undefined ? undefined : mutate(
              v,
              `payment-product "${s}"`,
              {},
              reject(
                404,
                "PRODUCT_UNKNOWN",
                "payment-product",
              ),
              { target: path + queryText(v.query) },
            ),
          );
        })
      : undefined,
  localeUnknown: (v) =>
    "locale" in v.op.params
      ? LOCALE_WORD.filter((s) => !["ge", "en", "ka"].includes(s)).map(
        (s) => {
          const path = withParam(v, "locale", s);
          return path === undefined ? undefined : mutate(
            v,
            `locale "${s}"`,
            {},
            reject(
              400,
              "PARAMETER_NOT_SUPPORTED",
              "locale",
            ),
            { target: path + queryText(v.query) },
          );
        },
      )
      : undefined,
  idOverlong: (v) => {
    const names = idParams(v.op);
    if (names.length === 0) return undefined;
    return fc.tuple(fc.constantFrom(...names), OVERLONG_ID)
      .map(([name, id]) =>
        mutate(v, `${name} of ${id.length} characters`, {}, badParam(name), {
          target: withParam(v, name, id)! + queryText(v.query),
        })
      );
  },
  idTricky: (v) => {
    const names = idParams(v.op);
    if (names.length === 0) return undefined;
    return fc.tuple(
      fc.constantFrom(...names),
      ID_PART,
      fc.constantFrom(
        "%2F",
        "%2f",
        "%5C",
        "%25",
        "%00",
        ";",
        "%20",
        "%C3%A9",
        "%3F",
        "%23",
        "%3B",
        "%ff",
        "%zz",
        "@",
        ":",
        "!",
        "$",
      ),
      ID_PART,
    ).map(([name, a, trick, b]) => {
      const raw = a + trick + b;
      return mutate(v, `${name} "${raw}"`, {}, badParam(name), {
        target: withParam(v, name, raw)! + queryText(v.query),
      });
    });
  },
  dotSegment: (v) => {
    const names = idParams(v.op);
    if (names.length === 0) return undefined;
    return fc.tuple(
      fc.constantFrom(...names),
      fc.constantFrom(".", "..", "%2e", "%2E", "%2e%2e", ".%2e", "%2E."),
    ).map(([name, raw]) =>
      mutate(v, `${name} "${raw}"`, {}, badParam(name), {
        target: withParam(v, name, raw)! + queryText(v.query),
      })
    );
  },
  unknownSegment: (v) =>
    fc.tuple(SEGMENT_WORD, fc.nat()).map(([word, at]) => {
      const segments = pathOf(v).split("/");
      const i = 1 + (at % segments.length);
      const path = [...segments.slice(0, i), word, ...segments.slice(i)].join("/");
      return publicRoute(v.op.method, path).kind === "404"
        ? mutate(v, `segment "${word}" inserted`, {}, reject(404, "RESOURCE_UNKNOWN"), {
          target: path + queryText(v.query),
        })
        : undefined;
    }),
  wrongMethod: (v) =>
    fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH").map((method) => {
      const route = publicRoute(method, pathOf(v));
      if (route.kind !== "405") return undefined;
      const expect: Expectation = {
        kind: "reject",
        status: 405,
        code: "SERVICE_INVALID",
        headers: { allow: route.allow.join(", ") },
      };
      return mutate(v, `method ${method}`, {}, expect, { method });
    }),
};

function badParam(name: string): Expectation {
  return reject(400, "FORMAT_ERROR", name);
}

/** A JSON body with one field path set to a value (a copy). */
export function setField(json: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = Array.isArray(json) ? [...json] : { ...(json as Record<string, unknown>) };
  const [head, ...rest] = path;
  (copy as Record<string | number, unknown>)[head] = setField(
    (json as Record<string | number, unknown>)[head],
    rest,
    value,
  );
  return copy;
}

export function getField(json: unknown, path: (string | number)[]): unknown {
  let at = json;
  for (const part of path) at = (at as Record<string | number, unknown>)?.[part];
  return at;
}

export function jsonPathText(path: (string | number)[]): string {
  return path.map((p, i) => typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`).join("");
}

/** The IBAN fields of a payment or consent body. */
function ibanPaths(v: ValidRequest): (string | number)[][] {
  const json = v.json as Record<string, unknown> | undefined;
  if (!json || typeof json !== "object") return [];
  const paths: (string | number)[][] = [];
  if (v.op.body === "payment") {
    paths.push(["debtorAccount", "iban"]);
    if (Array.isArray(json.payments)) {
      json.payments.forEach((_, i) => paths.push(["payments", i, "creditorAccount", "iban"]));
    } else paths.push(["creditorAccount", "iban"]);
  }
  if (v.op.body === "consent") {
    const access = json.access as Record<string, unknown[] | undefined>;
    for (const list of ["accounts", "balances", "transactions"]) {
      access[list]?.forEach((_, i) => paths.push(["access", list, i, "iban"]));
    }
  }
  return paths;
}

const bodyMakers: Record<string, Maker> = {
  bodyOnNoBodyOperation: (v) =>
    v.op.body === "none"
      ? JSON_3.map((value) =>
        mutate(v, "a body on an operation without one", {
          body: jsonBytes(value),
          headers: v.headers.some(([n]) => n === "content-type")
            ? v.headers
            : [...v.headers, ["content-type", "application/json"]],
        }, reject(400, "FORMAT_ERROR", "body"))
      )
      : undefined,
  bodyMissing: (v) =>
    ["payment", "consent", "checkoutOrder"].includes(v.op.body)
      ? fc.constantFrom(undefined, "").map((body) =>
        mutate(
          v,
          body === undefined ? "body dropped" : "empty body",
          { body },
          reject(
            400,
            "FORMAT_ERROR",
            "body",
          ),
        )
      )
      : undefined,
  malformedJson: (v) =>
    jsonKind(v) && v.body !== undefined
      ? fc.oneof(
        fc.nat().map((n) => v.body!.slice(0, n % Math.max(1, v.body!.length))),
        fc.constantFrom("}", "]", ",", "'", "NaN", "\u0000").map((junk) => v.body + junk),
        fc.constantFrom("{'a': 1}", "{a:1}", "[1,]", '{"a":1,}', "undefined", '"open', "tru"),
      ).filter((text) => text.trim().length > 0 && !parses(text)).map((text) =>
        mutate(v, "malformed JSON", { body: text }, reject(400, "FORMAT_ERROR", "body"))
      )
      : undefined,
  invalidUtf8: (v) =>
    v.op.body !== "none" && v.body !== undefined
      ? fc.tuple(
        fc.nat(),
        fc.constantFrom(
          "\xff",
          "\xc0\x80",
          "\x80",
          "\xed\xa0\x80",
          "\xe2\x82",
          "\xf8\x88\x80\x80\x80",
        ),
      ).map(([at, bad]) => {
        const text = v.body!;
        const i = at % (text.length + 1);
        return mutate(v, `invalid UTF-8 ${JSON.stringify(bad)} at byte ${i}`, {
          body: text.slice(0, i) + bad + text.slice(i),
        }, reject(400, "FORMAT_ERROR", "body"));
      })
      : undefined,
  deepNesting: (v) =>
    jsonKind(v)
      ? fc.tuple(fc.integer({ min: 17, max: 3000 }), fc.boolean()).map(([depth, objects]) => {
        const body = objects
          ? '{"a":'.repeat(depth) + "1" + "}".repeat(depth)
          : "[".repeat(depth) + "]".repeat(depth);
        const headers = has(v.headers, "content-type")
          ? v.headers
          : [...v.headers, ["content-type", "application/json"] as [string, string]];
        return mutate(
          v,
          `JSON nested ${depth} deep`,
          { body, headers },
          reject(
            400,
            "FORMAT_ERROR",
            "body",
          ),
        );
      })
      : undefined,
  creditorNameTooLong: (v) => {
    if (v.op.body !== "payment" || isPain(v.params)) return undefined;
    const json = v.json as Record<string, unknown>;
    const paths = Array.isArray(json.payments)
      ? json.payments.map((_, i) => ["payments", i, "creditorName"])
      : [["creditorName"]];
    return fc.tuple(fc.constantFrom(...paths), LONG_NAME)
      .map(([path, name]) =>
        mutate(v, `${jsonPathText(path)} of ${name.length} characters`, {
          body: jsonBytes(setField(json, path, name), v.indent),
        }, reject(400, "FORMAT_ERROR", jsonPathText(path)))
      );
  },
  ibanCheckDigits: (v) => {
    const paths = ibanPaths(v);
    if (paths.length === 0 || (v.op.body === "payment" && isPain(v.params))) return undefined;
    return fc.tuple(fc.constantFrom(...paths), fc.integer({ min: 0, max: 99 })).map((
      [path, digits],
    ) => {
      const old = getField(v.json, path) as string;
      const iban = old.slice(0, 2) + String(digits).padStart(2, "0") + old.slice(4);
      if (ibanValid(iban)) return undefined;
      return mutate(v, `${jsonPathText(path)} "${iban}"`, {
        body: jsonBytes(setField(v.json, path, iban), v.indent),
      }, reject(400, "FORMAT_ERROR", jsonPathText(path)));
    });
  },
  missingField: (v) => {
    const fields = requiredFields(v);
    if (fields.length === 0) return undefined;
    return fc.constantFrom(...fields).map((field) => {
      const json = { ...(v.json as Record<string, unknown>) };
      delete json[field];
      return mutate(
        v,
        `${field} left out`,
        { body: jsonBytes(json, v.indent) },
        reject(
          400,
          "FORMAT_ERROR",
          field,
        ),
      );
    });
  },
  extraField: (v) => {
    const json = v.json;
    if (!objectBody(v)) return undefined;
    return fc.tuple(FIELD_NAME, JSON_2)
      .filter(([key]) => !(key in (json as Record<string, unknown>)) && !KNOWN_FIELDS.has(key))
      .map(([key, value]) =>
        mutate(v, `unknown field ${key}`, {
          body: jsonBytes({ ...(json as Record<string, unknown>), [key]: value }, v.indent),
        }, reject(400, "FORMAT_ERROR", key))
      );
  },
  wrongType: (v) => {
    const fields = requiredFields(v);
    if (fields.length === 0) return undefined;
    return fc.tuple(
      fc.constantFrom(...fields),
      fc.constantFrom<unknown>(17, -1.5, true, null, [], ["x"], { x: 1 }, "", "x"),
    ).map(([field, value]) => {
      const old = (v.json as Record<string, unknown>)[field];
      // A value of the field's own type may be valid ("x" for a name): only other types.
      if (typeOf(value) === typeOf(old)) return undefined;
      return mutate(v, `${field}: ${JSON.stringify(value)}`, {
        body: jsonBytes({ ...(v.json as Record<string, unknown>), [field]: value }, v.indent),
      }, reject(400, "FORMAT_ERROR", field));
    });
  },
  bodyTruncated: (v) =>
    v.body !== undefined && v.body.length > 0
      ? fc.nat().map((n) => {
        const at = n % v.body!.length;
        return {
          ...mutate(
            v,
            `body cut off after ${at} of ${v.body!.length} bytes`,
            {},
            reject(
              400,
              "FORMAT_ERROR",
              "body",
            ),
          ),
          truncateAt: at,
        };
      })
      : undefined,
  bodyTooLarge: (v) =>
    fc.integer({ min: 1_048_577, max: 1_200_000 }).map((size) =>
      mutate(v, `body of ${size} bytes`, {
        body: "x".repeat(size),
        headers: has(v.headers, "content-type") || v.op.body === "none"
          ? v.headers
          : [...v.headers, ["content-type", "application/json"]],
      }, reject(413, "PAYLOAD_TOO_LARGE"))
    ),
};

/** Every field name the bodies of the documents and the standard use (an unknown field is none of these). */
const KNOWN_FIELDS = new Set([
  ...Object.keys({
    debtorAccount: 0,
    endToEndIdentification: 0,
    instructedAmount: 0,
    creditorAccount: 0,
    creditorAgent: 0,
    creditorAgentName: 0,
    creditorName: 0,
    creditorAddress: 0,
    remittanceInformationUnstructured: 0,
    batchBookingPreferred: 0,
    requestedExecutionDate: 0,
    payments: 0,
    startDate: 0,
    endDate: 0,
    executionRule: 0,
    frequency: 0,
    dayOfExecution: 0,
    access: 0,
    recurringIndicator: 0,
    validUntil: 0,
    frequencyPerDay: 0,
    combinedServiceIndicator: 0,
    psuData: 0,
    authenticationMethodId: 0,
    scaAuthenticationData: 0,
    confirmationCode: 0,
    intent: 0,
    items: 0,
    locale: 0,
    shop_order_id: 0,
    redirect_url: 0,
    show_shop_order_id_on_extract: 0,
    capture_method: 0,
    purchase_units: 0,
    // The Berlin Group standard's optional fields, which the gateway accepts too
    // (docs/interoperability.md): not unknown either.
    instructionIdentification: 0,
    debtorName: 0,
    ultimateDebtor: 0,
    ultimateCreditor: 0,
    creditorId: 0,
    purposeCode: 0,
    chargeBearer: 0,
    remittanceInformationUnstructuredArray: 0,
    remittanceInformationStructured: 0,
    remittanceInformationStructuredArray: 0,
    requestedExecutionTime: 0,
    monthsOfExecution: 0,
  }),
]);

/** The JSON body is an object the schema reads (not XML, null or absent). */
function objectBody(v: ValidRequest): boolean {
  return jsonKind(v) && v.body !== undefined && v.json !== null && typeof v.json === "object";
}

/** The fields the documents require of the body (README "Every rule and its error"). */
function requiredFields(v: ValidRequest): string[] {
  if (!objectBody(v)) return [];
  switch (v.op.body) {
    case "payment":
      return v.params["payment-service"] === "bulk-payments"
        ? ["debtorAccount", "payments"]
        : v.params["payment-service"] === "periodic-payments"
        ? [
          "debtorAccount",
          "instructedAmount",
          "creditorAccount",
          "creditorName",
          "startDate",
          "frequency",
        ]
        : ["debtorAccount", "instructedAmount", "creditorAccount", "creditorName"];
    case "consent":
      return [
        "access",
        "recurringIndicator",
        "validUntil",
        "frequencyPerDay",
        "combinedServiceIndicator",
      ];
    case "checkoutOrder":
      return ["intent", "items", "redirect_url", "purchase_units"];
    default:
      return [];
  }
}

function typeOf(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}

export function parses(text: string): boolean {
  try {
    JSON.parse(
      new TextDecoder("utf-8", { fatal: true }).decode(
        Uint8Array.from(text, (c) => c.charCodeAt(0)),
      ),
    );
    return true;
  } catch {
    return false;
  }
}

const queryMakers: Record<string, Maker> = {
  unknownQuery: (v) =>
    QUERY_NAME.filter((n) => !knownQuery(v.op).includes(n))
      .map((name) =>
        mutate(
          v,
          `query parameter "${name}"`,
          { query: [...v.query, [name, "1"]] },
          reject(
            400,
            "PARAMETER_NOT_SUPPORTED",
            name,
          ),
        )
      ),
  queryTwice: (v) =>
    v.query.length > 0
      ? fc.nat().map((n) => {
        const pair = v.query[n % v.query.length];
        return mutate(
          v,
          `query parameter "${pair[0]}" twice`,
          { query: [...v.query, pair] },
          reject(
            400,
            "FORMAT_ERROR",
            pair[0],
          ),
        );
      })
      : undefined,
  queryControl: (v) =>
    v.query.length > 0
      ? fc.tuple(fc.nat(), fc.constantFrom("%09", "%7F", "%C2%85", "%0A", "%00")).map(([n, c]) => {
        const i = n % v.query.length;
        const name = v.query[i][0];
        return mutate(v, `query parameter "${name}" with ${c}`, {
          query: v.query.map(([k, val], j) => [k, j === i ? val + c : val]),
        }, reject(400, "FORMAT_ERROR", name));
      })
      : undefined,
  transactionQueryBad: (v) => {
    if (v.op.id !== "getTransactionList") return undefined;
    const set = (name: string, value: string | undefined) => {
      const rest = v.query.filter(([k]) => k !== name);
      return value === undefined ? rest : [...rest, [name, value] as [string, string]];
    };
    return fc.oneof(
      fc.constantFrom(undefined, "BOOKED", "everything", "").map((s) => ({
        query: set("bookingStatus", s),
        expect: reject(400, "FORMAT_ERROR", "bookingStatus"),
      })),
      fc.constantFrom("2025-02-30", "20250101", "2025-1-1", "2025-13-01", "yesterday").map((d) => ({
        query: set("dateFrom", d),
        expect: reject(400, "FORMAT_ERROR", "dateFrom"),
      })),
      fc.constant({
        query: set("dateTo", "2020-01-01").filter(([k]) => k !== "dateFrom").concat([[
          "dateFrom",
          "2020-01-02",
        ]]),
        expect: reject(400, "PERIOD_INVALID", "dateFrom"),
      }),
    ).map(({ query, expect }) =>
      mutate(v, `transaction query ${queryText(query)}`, { query }, expect)
    );
  },
  pagingBad: (v) =>
    knownQuery(v.op).includes("page")
      ? fc.tuple(
        fc.constantFrom("page", "page-size"),
        fc.constantFrom("-1", "01", "2147483648", "abc", "1.5", "", "0x10"),
      ).map(([name, value]) => {
        const bad = name === "page-size" && value === "01" ? "101" : value;
        return mutate(v, `${name}=${bad}`, {
          query: [...v.query.filter(([k]) => k !== name), [name, bad]],
        }, reject(400, "FORMAT_ERROR", name));
      })
      : undefined,
  installmentBad: (v) =>
    v.op.id === "calculateInstallment"
      ? fc.oneof(
        fc.constantFrom("0", "-5", "1,5", "abc", "0.00", "").map((amount) => ({
          query: [["amount", amount], ...v.query.filter(([k]) => k !== "amount")] as [
            string,
            string,
          ][],
          name: "amount",
        })),
        fc.constant({ query: v.query.filter(([k]) => k !== "client_id"), name: "client_id" }),
        fc.constant({ query: v.query.filter(([k]) => k !== "amount"), name: "amount" }),
      ).map(({ query, name }) =>
        mutate(
          v,
          `installment query ${queryText(query)}`,
          { query },
          reject(
            400,
            "FORMAT_ERROR",
            name,
          ),
        )
      )
      : undefined,
};

/** Every certain mutation by name. */
export const CERTAIN: Record<string, Maker> = {
  ...headerMakers,
  ...pathMakers,
  ...bodyMakers,
  ...queryMakers,
};

/** A valid request changed once, with the documented outcome of the change. */
export function certainMutation(
  names: string[] = Object.keys(CERTAIN),
): fc.Arbitrary<FuzzRequest> {
  return anyValidRequest.chain((valid) => {
    const applicable = names.map((name) => CERTAIN[name](valid)).filter((a) => a !== undefined);
    return applicable.length === 0 ? fc.constant(undefined) : fc.oneof(...applicable);
  }).filter((r): r is FuzzRequest => r !== undefined);
}
