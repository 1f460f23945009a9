/**
 * fast-check generators of requests for every operation of the catalogue: valid ones (every
 * header, path, query and body rule of the documents kept) and mutated ones. Each generated
 * request carries what the documents say must happen to it (`expect`), worked out here from the
 * documents and the catalogue, independently of the gateway's checks: forwarded unchanged (method,
 * upstream path, body bytes), or rejected with a given status, code and `path` and never
 * forwarded. Mutations whose outcome the documents do not pin down carry no expectation; only the
 * properties every answer must have apply to them.
 *
 * Header values and bodies are byte strings (one character per byte, 0-255), sent as they are.
 */
import fc from "fast-check";
import {
  type Operation,
  OPERATIONS,
  PAYMENT_PRODUCTS,
  PAYMENT_SERVICES,
  templateParams,
} from "../../src/psd2/catalogue.ts";
import { BOOKING_STATUS, CARD_BOOKING_STATUS } from "../../src/bodies/query.ts";

/** Replaced by a new UUID each time a request is sent (X-Request-ID replay stays out of the way). */
export const FRESH_ID = "<fresh X-Request-ID>";

/** What the documents say must happen to a request. */
export type Expectation =
  | {
    kind: "forward";
    /** Path and query the upstream must see. */
    upstreamPath: string;
    /** Response headers the rule adds (lower-case name, value). */
    headers?: Record<string, string>;
    /** Headers (lower case) that must not reach the upstream: ignorable ones that broke a rule. */
    dropped?: string[];
  }
  | {
    kind: "reject";
    status: number;
    code: string;
    /** The `path` of the tppMessage; `undefined`: not asserted. */
    path?: string;
    /** Extra response headers the rule names (lower-case name, value). */
    headers?: Record<string, string>;
  }
  /**
   * Forwarded, or rejected with this status and code (a consent the gateway learnt may be read
   * only so many times a day).
   */
  | { kind: "forwardOr"; upstreamPath: string; status: number; code: string; path: string }
  /**
   * The first answer to the same request again (X-Request-ID replay), marked
   * `X-Idempotent-Replay: true`, without reaching the upstream.
   */
  | { kind: "replay"; status: number; body: Uint8Array };

/** A request as it goes over the wire. */
export interface FuzzRequest {
  /** The operation it was generated from. */
  op: string;
  method: string;
  /** The request target (path and query), sent as it is. */
  target: string;
  /** Header names and byte-string values, in order, repeats allowed. */
  headers: [string, string][];
  /** The body as a byte string; `undefined`: no body and no Content-Length. */
  body?: string;
  /** Sent with `Transfer-Encoding: chunked` in chunks of these sizes (repeated), not Content-Length. */
  chunks?: number[];
  /** Only this many body bytes are sent before the client closes its side of the connection. */
  truncateAt?: number;
  /** What was done to the valid request. */
  mutation: string;
  expect?: Expectation;
}

/** A valid request, still in parts, for mutations to change. */
export interface ValidRequest {
  op: Operation;
  /** Path parameters as written in the target (valid ones need no encoding). */
  params: Record<string, string>;
  query: [string, string][];
  headers: [string, string][];
  /** The JSON value of the body (JSON bodies), for field mutations. */
  json?: unknown;
  /** How the JSON body was written: indentation of JSON.stringify. */
  indent?: string | number;
  /** The body as a byte string. */
  body?: string;
  /** Chunk sizes when the body is sent chunked. */
  chunks?: number[];
}

// ---------------------------------------------------------------------------------------------
// Bytes and text.

/** A JavaScript string as the byte string of its UTF-8 encoding. */
export function utf8(text: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(text)) out += String.fromCharCode(byte);
  return out;
}

/** A byte string as bytes. */
export function bytesOf(binary: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}

/** JSON text of a value as a UTF-8 byte string. */
export function jsonBytes(value: unknown, indent?: string | number): string {
  return utf8(JSON.stringify(value, null, indent));
}

// ---------------------------------------------------------------------------------------------
// Routing, as the README describes it: the catalogue's templates, a literal segment winning over
// a parameter at the first segment where two templates differ.

interface Template {
  path: string;
  segments: string[];
  ops: Operation[];
}

function isParam(segment: string): boolean {
  return segment.startsWith("{");
}

function specificity(a: Template, b: Template): number {
  for (let i = 0; i < Math.min(a.segments.length, b.segments.length); i++) {
    const d = Number(isParam(a.segments[i])) - Number(isParam(b.segments[i]));
    if (d !== 0) return d;
  }
  return b.segments.length - a.segments.length;
}

function templates(pathOf: (op: Operation) => string): Template[] {
  const byPath = new Map<string, Operation[]>();
  for (const op of OPERATIONS) {
    const path = pathOf(op);
    byPath.set(path, [...(byPath.get(path) ?? []), op]);
  }
  return [...byPath].map(([path, ops]) => ({ path, segments: path.split("/"), ops }))
    .sort(specificity);
}

/**
 * The upstream path template of an operation (README, "Choices": a Berlin Group operation's `/v1`
 * under `/psd2/v1`; checkout, calculator and products: the same path).
 */
export function upstreamTemplate(op: Operation): string {
  return ["checkout", "installment", "products"].includes(op.group) ? op.path : `/psd2${op.path}`;
}

const PUBLIC = templates((op) => op.path);
const UPSTREAM = templates(upstreamTemplate);

/** Where a path (without query) goes. */
export type Route =
  | { kind: "op"; op: Operation; params: Record<string, string> }
  | { kind: "405"; allow: string[] }
  | { kind: "404" };

function match(all: Template[], method: string, path: string): Route {
  const segments = path.split("/");
  for (const t of all) {
    if (t.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const fits = t.segments.every((s, i) => {
      if (!isParam(s)) return s === segments[i];
      params[s.slice(1, -1)] = segments[i];
      return segments[i] !== "";
    });
    if (!fits) continue;
    const op = t.ops.find((o) => o.method === method);
    return op ? { kind: "op", op, params } : { kind: "405", allow: t.ops.map((o) => o.method) };
  }
  return { kind: "404" };
}

/** The route of a public path (raw, without query). */
export function publicRoute(method: string, path: string): Route {
  return match(PUBLIC, method, path);
}

/** The operation an upstream request belongs to. */
export function upstreamRoute(method: string, path: string): Route {
  return match(UPSTREAM, method, path);
}

function fill(template: string, params: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name) => params[name]);
}

function queryText(query: [string, string][]): string {
  return query.length === 0 ? "" : "?" + query.map(([k, v]) => `${k}=${v}`).join("&");
}

// ---------------------------------------------------------------------------------------------
// Values the documents define.

/** Resource ids: 1-128 of A-Z a-z 0-9 . _ ~ -, not only dots. */
export const safeId = fc.stringMatching(/^[A-Za-z0-9._~-]{1,128}$/).filter((v) => !/^\.+$/.test(v));

const uuid = fc.uuid();

/** ISO 13616 check: the rearranged IBAN, letters as 10-35, is 1 modulo 97. */
export function ibanValid(iban: string): boolean {
  const rearranged = (iban.slice(4) + iban.slice(0, 4)).toUpperCase();
  let rest = 0;
  for (const ch of rearranged) {
    const value = /[A-Z]/.test(ch) ? ch.charCodeAt(0) - 55 : Number(ch);
    rest = value >= 10 ? (rest * 100 + value) % 97 : (rest * 10 + value) % 97;
  }
  return rest === 1;
}

function withCheckDigits(country: string, bban: string): string {
  for (let d = 2; d <= 98; d++) {
    const iban = `${country}${String(d).padStart(2, "0")}${bban}`;
    if (ibanValid(iban)) return iban;
  }
  throw new Error("unreachable");
}

/** IBANs with valid check digits. */
export const iban = fc.tuple(
  fc.stringMatching(/^[A-Z]{2}$/),
  fc.stringMatching(/^[A-Z0-9]{1,30}$/),
).map(([country, bban]) => withCheckDigits(country, bban));

const CURRENCIES = ["EUR", "GEL", "USD", "GBP", "CHF", "JPY", "SEK", "PLN"];
const currency = fc.constantFrom(...CURRENCIES);

/** Positive amounts: `[0-9]{1,14}(.[0-9]{1,3})?`, not zero. */
const positiveAmount = fc.stringMatching(/^[0-9]{1,14}(\.[0-9]{1,3})?$/).filter((v) =>
  /[1-9]/.test(v)
);

/** Free text in the interface character set. */
export function charsetText(min: number, max?: number) {
  if (max === undefined) [min, max] = [1, min];
  return fc.string({ unit: fc.constantFrom(...CHARSET), minLength: min, maxLength: max });
}

/** The interface character set (000, "What the service does"). */
const CHARSET = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-?:().,'+ "];

/** A calendar day `days` from today (UTC). */
export function dayFromToday(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

const futureDay = fc.integer({ min: 0, max: 3650 }).map(dayFromToday);

/** Any real calendar date from 0000-01-01 to 9999-12-31. */
export const anyDate = fc.date({
  min: new Date("0000-01-01T00:00:00Z"),
  max: new Date("9999-12-31T00:00:00Z"),
  noInvalidDate: true,
}).map((d) => d.toISOString().slice(0, 10));

// Labels start with a letter (an all-digit last label would be read as an IPv4 number) and have
// no hyphens (a label starting "xn--" would have to be valid punycode).
const host = fc.stringMatching(/^[a-z][a-z0-9]{0,19}(\.[a-z][a-z0-9]{0,19}){0,3}$/);

/** Absolute https URIs, visible ASCII. */
export const httpsUri = fc.tuple(
  host,
  fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
  fc.stringMatching(/^(\/[A-Za-z0-9._~-]{0,20}){0,4}$/),
  fc.option(fc.stringMatching(/^[A-Za-z0-9=&_-]{0,40}$/), { nil: undefined }),
).map(([h, port, path, q]) =>
  `https://${h}${port === undefined ? "" : `:${port}`}${path}${q === undefined ? "" : `?${q}`}`
);

const ipv4 = fc.tuple(
  fc.nat(255),
  fc.nat(255),
  fc.nat(255),
  fc.nat(255),
).map((parts) => parts.join("."));

function decimals(n: number, digits: number): string {
  return String(n).padStart(digits, "0");
}

/** GEO:<lat>;<long>: latitude ±90 with six decimals, longitude ±180 with some decimals. */
const geoParts = fc.tuple(
  fc.boolean(),
  fc.integer({ min: 0, max: 90_000_000 }),
  fc.boolean(),
  fc.integer({ min: 0, max: 180 }),
  fc.stringMatching(/^[0-9]{1,8}$/),
).map(([latMinus, lat, longMinus, longInt, longDec]) => {
  const latText = `${latMinus ? "-" : ""}${Math.floor(lat / 1e6)}.${decimals(lat % 1e6, 6)}`;
  const longText = `${longMinus ? "-" : ""}${longInt}.${
    longInt === 180 ? "0".repeat(longDec.length) : longDec
  }`;
  return [latText, longText] as const;
});

/** Printable ASCII without surrounding spaces (HTTP trims them). */
export function printable(min: number, max: number) {
  return fc.string({ minLength: min, maxLength: max, unit: "grapheme-ascii" })
    .map((v) => v.trim()).filter((v) => v.length >= min);
}

/** Text of 1 to `maxChars` characters of the Basic Multilingual Plane, as UTF-8 bytes. */
function unicodeHeader(maxChars: number) {
  const char = fc.integer({ min: 0xa1, max: 0xd7ff }).map((code) => String.fromCharCode(code));
  return fc.integer({ min: 1, max: maxChars })
    .chain((n) => fc.string({ unit: char, minLength: n, maxLength: n }))
    .map(utf8);
}

// ---------------------------------------------------------------------------------------------
// Headers.

/** Optional headers an operation takes, with valid values. */
/** Arbitraries are built once per key and reused: building them costs more than drawing. */
function memo<K, V>(build: (key: K) => V): (key: K) => V {
  const cache = new Map<K, V>();
  return (key) => {
    if (!cache.has(key)) cache.set(key, build(key));
    return cache.get(key)!;
  };
}

const optionalHeader = memo(buildOptionalHeader);

function buildOptionalHeader(name: string): fc.Arbitrary<[string, string][]> | undefined {
  const one = (value: fc.Arbitrary<string>) => value.map((v): [string, string][] => [[name, v]]);
  switch (name) {
    case "psu-ip-address":
      return one(ipv4);
    case "psu-ip-port":
      return one(fc.integer({ min: 1, max: 65535 }).map(String));
    case "psu-geo-location":
      return one(geoParts.map(([lat, long]) => `GEO:${lat};${long}`));
    case "psu-device-id":
      return one(uuid);
    case "psu-http-method":
      return one(fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE"));
    case "psu-accept":
      return one(fc.constantFrom("application/json", "text/html, */*;q=0.8"));
    case "psu-accept-charset":
      return one(fc.constantFrom("utf-8", "iso-8859-1;q=0.5, utf-8"));
    case "psu-accept-encoding":
      return one(fc.constantFrom("gzip", "gzip, deflate, br"));
    case "psu-accept-language":
      return one(fc.constantFrom("ka", "en-US,en;q=0.9", "de-DE"));
    case "psu-user-agent":
      return one(fc.oneof(printable(1, 200), unicodeHeader(60)));
    case "psu-id":
    case "psu-id-type":
    case "psu-corporate-id":
    case "psu-corporate-id-type":
      // At most 50 characters; non-ASCII characters count as one each.
      return one(fc.oneof(printable(1, 50), unicodeHeader(50)));
    case "consent-id":
      return one(safeId);
    case "tpp-nok-redirect-uri":
    case "tpp-notification-uri":
      return one(httpsUri);
    case "tpp-notification-content-preferred":
      return one(
        fc.tuple(
          fc.shuffledSubarray(["SCA", "PROCESS", "LAST"], { minLength: 1 }),
          fc.constantFrom(",", ", "),
        ).map(([values, sep]) => `status=${values.join(sep)}`),
      );
    case "tpp-decoupled-preferred":
    case "tpp-explicit-authorisation-preferred":
    case "tpp-rejection-nofunds-preferred":
      return one(fc.constantFrom("true", "false"));
    case "tpp-brand-logging-information":
      return one(printable(1, 255));
    case "authorization":
      return one(fc.stringMatching(/^[A-Za-z0-9._~+/-]{1,200}=*$/).map((t) => `Bearer ${t}`));
    default:
      return undefined;
  }
}

/** The redirect headers: preferred true with a URI, false, or absent; a URI may come alone. */
const redirectHeaders = fc.oneof(
  fc.constant<[string, string][]>([]),
  httpsUri.map((uri): [string, string][] => [
    ["tpp-redirect-preferred", "true"],
    ["tpp-redirect-uri", uri],
  ]),
  fc.constant<[string, string][]>([["tpp-redirect-preferred", "false"]]),
  httpsUri.map((uri): [string, string][] => [["tpp-redirect-uri", uri]]),
);

const JSON_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "Application/JSON",
  "application/json;charset=UTF-8",
];
const XML_TYPES = ["application/xml", "text/xml", "application/xml; charset=utf-8"];
const ACCEPTS = ["application/json", "*/*", "application/*", "application/json;q=0.9, text/html"];

export function isPain(params: Record<string, string>): boolean {
  return (params["payment-product"] ?? "").startsWith("pain.001-");
}

const headersMemo = memo((key: string) => {
  const [id, pain, withBody] = key.split("|");
  const op = OPERATIONS.find((o) => o.id === id)!;
  return buildHeaders(op, pain === "pain", withBody === "body");
});

function headersFor(op: Operation, params: Record<string, string>, withBody: boolean) {
  return headersMemo(`${op.id}|${isPain(params) ? "pain" : ""}|${withBody ? "body" : ""}`);
}

function buildHeaders(op: Operation, pain: boolean, withBody: boolean) {
  const params: Record<string, string> = pain ? { "payment-product": "pain.001-" } : {};
  const parts: fc.Arbitrary<[string, string][]>[] = [];
  const optional = op.headers.filter((name) =>
    !op.required.includes(name) && optionalHeader(name) !== undefined
  );
  // X-Request-ID: required ones always, optional ones sometimes.
  if (op.required.includes("x-request-id")) {
    parts.push(fc.constant([["x-request-id", FRESH_ID]]));
  } else if (op.headers.includes("x-request-id")) {
    parts.push(fc.constantFrom([], [["x-request-id", FRESH_ID]]));
  }
  for (const name of op.required) {
    if (name !== "x-request-id" && name !== "content-type") parts.push(optionalHeader(name)!);
  }
  const contentTypes = op.body === "payment" && isPain(params) ? XML_TYPES : JSON_TYPES;
  if (op.required.includes("content-type") || withBody) {
    parts.push(
      fc.constantFrom(...contentTypes).map((v): [string, string][] => [["content-type", v]]),
    );
  }
  if (op.headers.includes("tpp-redirect-preferred")) parts.push(redirectHeaders);
  // Any subset of the optional headers (each present about half of the time).
  for (const name of optional) {
    parts.push(fc.option(optionalHeader(name)!, { nil: [], freq: 2 }));
  }
  const accepts = op.id === "getPaymentInformation" && isPain(params)
    ? [...ACCEPTS, "application/xml"]
    : ACCEPTS;
  parts.push(fc.constantFrom([], ...accepts.map((a): [string, string][] => [["accept", a]])));
  return fc.tuple(...parts).map((lists) => lists.flat());
}

// ---------------------------------------------------------------------------------------------
// Bodies.

const accountReference = fc.record({
  iban,
  currency: fc.option(currency, { nil: undefined }),
}, { requiredKeys: ["iban"] });

const address = fc.record({
  streetName: charsetText(70),
  buildingnNumber: charsetText(16),
  townName: charsetText(35),
  postCode: charsetText(16),
  country: fc.stringMatching(/^[A-Z]{2}$/),
}, { requiredKeys: ["country"] });

const bic = fc.stringMatching(/^[A-Z]{6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3})?$/);

/** The fields of one payment besides debtorAccount. */
const paymentFields = {
  endToEndIdentification: charsetText(35),
  instructedAmount: fc.record({ currency, amount: positiveAmount }),
  creditorAccount: accountReference,
  creditorAgent: bic,
  creditorAgentName: charsetText(140),
  creditorName: charsetText(70),
  creditorAddress: address,
  remittanceInformationUnstructured: charsetText(140),
};
const PAYMENT_REQUIRED = ["instructedAmount", "creditorAccount", "creditorName"] as const;

const singlePayment = fc.record(
  { debtorAccount: accountReference, ...paymentFields },
  { requiredKeys: ["debtorAccount", ...PAYMENT_REQUIRED] },
);

const bulkPayment = fc.record({
  batchBookingPreferred: fc.boolean(),
  debtorAccount: accountReference,
  requestedExecutionDate: futureDay,
  payments: fc.array(fc.record(paymentFields, { requiredKeys: [...PAYMENT_REQUIRED] }), {
    minLength: 1,
    maxLength: 4,
  }),
}, { requiredKeys: ["debtorAccount", "payments"] });

const FREQUENCIES = [
  "Daily",
  "Weekly",
  "EveryTwoWeeks",
  "Monthly",
  "EveryTwoMonths",
  "Quarterly",
  "SemiAnnual",
  "Annual",
  "MonthlyVariable",
];

const periodicPayment = fc.tuple(
  singlePayment,
  fc.integer({ min: 0, max: 3650 }),
  fc.option(fc.integer({ min: 0, max: 3650 }), { nil: undefined }),
  fc.record({
    executionRule: fc.constantFrom("following", "preceding"),
    frequency: fc.constantFrom(...FREQUENCIES),
    dayOfExecution: fc.oneof(
      fc.integer({ min: 1, max: 31 }),
      fc.integer({ min: 1, max: 31 }).map(String),
      fc.integer({ min: 1, max: 9 }).map((d) => `0${d}`),
    ),
  }, { requiredKeys: ["frequency"] }),
  // monthsOfExecution is there if and only if the frequency is MonthlyVariable (1 to 11 months).
  fc.uniqueArray(fc.integer({ min: 1, max: 12 }).map(String), { minLength: 1, maxLength: 11 }),
).map(([payment, start, length, schedule, months]) => ({
  ...payment,
  startDate: dayFromToday(start),
  ...(length === undefined ? {} : { endDate: dayFromToday(start + length) }),
  ...schedule,
  ...(schedule.frequency === "MonthlyVariable" ? { monthsOfExecution: months } : {}),
}));

const ALL_ACCOUNTS = fc.constantFrom("allAccounts", "allAccountsWithOwnerName");

const consent = fc.tuple(
  fc.record({
    accounts: fc.array(accountReference, { maxLength: 3 }),
    balances: fc.array(accountReference, { maxLength: 3 }),
    transactions: fc.array(accountReference, { maxLength: 3 }),
    availableAccounts: ALL_ACCOUNTS,
    availableAccountsWithBalance: ALL_ACCOUNTS,
    allPsd2: ALL_ACCOUNTS,
  }, { requiredKeys: [] }).filter((access) => Object.keys(access).length > 0),
  fc.boolean(),
  fc.oneof(fc.integer({ min: 0, max: 3650 }).map(dayFromToday), fc.constant("9999-12-31")),
  fc.integer({ min: 1, max: 4 }),
  fc.boolean(),
).map(([access, recurring, validUntil, frequency, combined]) => ({
  access,
  recurringIndicator: recurring,
  validUntil,
  frequencyPerDay: recurring ? frequency : 1,
  combinedServiceIndicator: combined,
}));

function authorisationBody(update: boolean) {
  const one = [
    fc.record({
      password: printable(1, 512),
      encryptedPassword: printable(1, 4096),
      additionalPassword: printable(1, 512),
    }, { requiredKeys: [] }).filter((d) => Object.keys(d).length > 0).map((psuData) => ({
      psuData,
    })),
    printable(1, 35).map((authenticationMethodId) => ({ authenticationMethodId })),
    printable(1, 512).map((scaAuthenticationData) => ({ scaAuthenticationData })),
    fc.constant({}),
    fc.constant(null),
  ];
  if (update) one.push(printable(1, 512).map((confirmationCode) => ({ confirmationCode })));
  return fc.oneof(...one);
}

/** Whether text holds a C0, DEL or C1 control character. */
export function hasControl(text: string): boolean {
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/** Shop text (checkout): any language, no controls. */
function shopText(max: number) {
  return fc.string({ minLength: 1, maxLength: max, unit: "grapheme" }).filter((v) =>
    v.length <= max && !hasControl(v)
  );
}

const checkoutOrder = fc.record({
  intent: fc.constantFrom("CAPTURE", "AUTHORIZE"),
  items: fc.array(
    fc.record({
      // The document's forms (a string here, a number in a purchase unit), which reach the core
      // unchanged; the other forms are the body_schema tests'.
      amount: fc.stringMatching(/^[0-9]{1,9}(\.[0-9]{1,2})?$/),
      description: shopText(255),
      quantity: fc.integer({ min: 1, max: 1000 }),
      product_id: shopText(100),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  locale: fc.constantFrom("ka", "en-US"),
  shop_order_id: shopText(100),
  redirect_url: httpsUri,
  show_shop_order_id_on_extract: fc.boolean(),
  capture_method: fc.constantFrom("AUTOMATIC", "MANUAL"),
  units: fc.integer({ min: 1, max: 3 }),
}, { requiredKeys: ["intent", "items", "redirect_url", "units"] }).filter(({ items }) =>
  items.some((item) => Number(item.amount) > 0)
).map(({ units, ...order }) => {
  // The purchase units add up to the items (amount × quantity), split over `units` units.
  const tetri = order.items.reduce(
    (sum, item) => sum + BigInt(Math.round(Number(item.amount) * 100)) * BigInt(item.quantity),
    0n,
  );
  const count = tetri >= BigInt(units) ? BigInt(units) : 1n;
  const parts = Array.from(
    { length: Number(count) },
    (_, i) => tetri / count + (BigInt(i) < tetri % count ? 1n : 0n),
  );
  return {
    ...order,
    purchase_units: parts.map((part) => ({
      amount: { currency_code: "GEL", value: Number(part) / 100 },
    })),
  };
});

/** A well-formed pain.001 document with generated identifiers and amount. */
const pain001 = fc.tuple(
  fc.stringMatching(/^[A-Za-z0-9-]{1,35}$/),
  fc.stringMatching(/^[0-9]{1,9}\.[0-9]{2}$/),
  charsetText(140),
).map(([id, amount, text]) =>
  `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.03">
  <CstmrCdtTrfInitn>
    <GrpHdr><MsgId>${id}</MsgId><NbOfTxs>1</NbOfTxs></GrpHdr>
    <PmtInf><PmtInfId>${id}</PmtInfId><CdtTrfTxInf><Amt><InstdAmt Ccy="EUR">${amount}</InstdAmt></Amt>
    <RmtInf><Ustrd>${text.replace(/'/g, "&apos;")}</Ustrd></RmtInf></CdtTrfTxInf></PmtInf>
  </CstmrCdtTrfInitn>
</Document>
`
);

/** A confirmation of funds (1.3.11 `confirmationOfFunds`): account and amount, the rest optional. */
const fundsConfirmation = fc.record({
  cardNumber: fc.stringMatching(/^[0-9]{8,19}$/),
  account: accountReference,
  payee: charsetText(70),
  instructedAmount: fc.record({ currency, amount: positiveAmount }),
}, { requiredKeys: ["account", "instructedAmount"] });

/** A signing basket (1.3.11 `signingBasket`): payment ids, consent ids, or both, at least one. */
const signingBasket = fc.record({
  paymentIds: fc.array(safeId, { minLength: 1, maxLength: 5 }),
  consentIds: fc.array(safeId, { minLength: 1, maxLength: 5 }),
}, { requiredKeys: [] }).filter((basket) => Object.keys(basket).length > 0);

/** A JSON body value for an operation, or `undefined` for XML or none. */
function jsonBodyFor(op: Operation, params: Record<string, string>): fc.Arbitrary<unknown> {
  switch (op.body) {
    case "payment":
      return params["payment-service"] === "bulk-payments"
        ? bulkPayment
        : params["payment-service"] === "periodic-payments"
        ? periodicPayment
        : singlePayment;
    case "consent":
      return consent;
    case "authorisation":
      return authorisationBody(false);
    case "authorisationUpdate":
      return authorisationBody(true);
    case "checkoutOrder":
      return checkoutOrder;
    case "fundsConfirmation":
      return fundsConfirmation;
    case "signingBasket":
      return signingBasket;
    default:
      return fc.constant(undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// Query.

function queryFor(op: Operation): fc.Arbitrary<[string, string][]> {
  const pairs = (record: Record<string, string | undefined>) =>
    Object.entries(record).filter((e): e is [string, string] => e[1] !== undefined);
  const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
  const bool = fc.constantFrom("true", "false");
  switch (op.id) {
    case "getTransactionList":
    case "getCardAccountTransactionList":
      return fc.record({
        bookingStatus: op.id === "getTransactionList"
          ? fc.constantFrom(...BOOKING_STATUS)
          : fc.constantFrom(...CARD_BOOKING_STATUS),
        dates: fc.tuple(anyDate, anyDate).map(([a, b]) => (a <= b ? [a, b] : [b, a])),
        hasFrom: fc.boolean(),
        hasTo: fc.boolean(),
        entryReferenceFrom: maybe(safeId),
        deltaList: maybe(bool),
        withBalance: maybe(bool),
      }).map((q) => {
        const delta = q.entryReferenceFrom !== undefined || q.deltaList === "true";
        const needsFrom = !delta && q.bookingStatus !== "information";
        return pairs({
          bookingStatus: q.bookingStatus,
          dateFrom: q.hasFrom || needsFrom ? q.dates[0] : undefined,
          dateTo: q.hasTo ? q.dates[1] : undefined,
          entryReferenceFrom: q.entryReferenceFrom,
          deltaList: q.deltaList,
          // 1.3.11 gives card reports no withBalance.
          withBalance: op.id === "getTransactionList" ? q.withBalance : undefined,
        });
      }).chain((list) => fc.shuffledSubarray(list, { minLength: list.length }));
    case "getAccountList":
    case "readAccountDetails":
      return maybe(bool).map((b) => pairs({ withBalance: b }));
    case "calculateInstallment":
      return fc.tuple(positiveAmount, safeId).map(([amount, client]) =>
        pairs({ amount, client_id: client })
      );
    default:
      if (op.group === "products" && op.id !== "getProductById") {
        return fc.record({
          page: maybe(fc.integer({ min: 0, max: 2_147_483_647 }).map(String)),
          "page-size": maybe(fc.integer({ min: 1, max: 100 }).map(String)),
        }).map(pairs);
      }
      return fc.constant([]);
  }
}

// ---------------------------------------------------------------------------------------------
// Valid requests.

function paramsFor(op: Operation): fc.Arbitrary<Record<string, string>> {
  const entries = templateParams(op.path).map((name) => {
    const values = op.params[name]?.values;
    return values ? fc.constantFrom(...values) : safeId;
  });
  const names = templateParams(op.path);
  return fc.tuple(...entries).map((values) =>
    Object.fromEntries(names.map((name, i) => [name, values[i]]))
  );
}

/** A request to `op` that keeps every rule of the documents. */
export const validRequest: (op: Operation) => fc.Arbitrary<ValidRequest> = memo(buildValid);

function buildValid(op: Operation): fc.Arbitrary<ValidRequest> {
  return paramsFor(op).chain((params) => {
    const xml = op.body === "payment" && isPain(params);
    const body = op.body === "none"
      ? fc.constant({ json: undefined, body: undefined })
      : xml
      ? pain001.map((text) => ({ json: undefined, body: utf8(text) }))
      : fc.tuple(jsonBodyFor(op, params), fc.constantFrom(undefined, 2, "\t")).map((
        [json, indent],
      ) => ({
        json,
        indent,
        // An authorisation without a body is an "update PSU identification" too.
        body: json === null && indent === "\t" ? undefined : jsonBytes(json, indent),
      }));
    // Chunks of at least body_limit's min_chunk_bytes (64): smaller ones are refused past 16.
    const chunks = fc.option(
      fc.array(fc.integer({ min: 64, max: 300 }), { minLength: 1, maxLength: 6 }),
      {
        nil: undefined,
        freq: 3,
      },
    );
    return body.chain((b) =>
      fc.tuple(headersFor(op, params, b.body !== undefined), queryFor(op), chunks).map((
        [headers, query, sizes],
      ) =>
        labelled({
          op,
          params,
          query,
          headers,
          ...b,
          ...(b.body !== undefined && sizes !== undefined ? { chunks: sizes } : {}),
        })
      )
    );
  });
}

/** Shows a valid request in counterexamples by its operation id and wire form. */
function labelled(valid: ValidRequest): ValidRequest {
  Object.defineProperty(valid, fc.toStringMethod, {
    value: () => {
      const { op: _op, ...rest } = valid;
      return `${valid.op.id} ${fc.stringify(rest)}`;
    },
  });
  return valid;
}

/** Every operation with its valid requests. */
export const anyValidRequest: fc.Arbitrary<ValidRequest> = fc.constantFrom(...OPERATIONS).chain(
  validRequest,
);

/** The request on the wire, with the expectation that it is forwarded unchanged. */
export function forwarded(valid: ValidRequest, mutation = "none"): FuzzRequest {
  return render(valid, {
    mutation,
    expect: {
      kind: "forward",
      upstreamPath: fill(upstreamTemplate(valid.op), valid.params) + queryText(valid.query),
    },
  });
}

/** Builds the wire form of a (changed) request. */
export function render(
  valid: ValidRequest,
  extra: { mutation: string; expect?: Expectation; target?: string; method?: string },
): FuzzRequest {
  return {
    op: valid.op.id,
    method: extra.method ?? valid.op.method,
    target: extra.target ?? fill(valid.op.path, valid.params) + queryText(valid.query),
    headers: valid.headers,
    body: valid.body,
    ...(valid.chunks && valid.body !== undefined ? { chunks: valid.chunks } : {}),
    mutation: extra.mutation,
    expect: extra.expect,
  };
}

/** The upstream path a valid request must reach. */
export function upstreamPathOf(valid: ValidRequest): string {
  return fill(upstreamTemplate(valid.op), valid.params) + queryText(valid.query);
}

export { PAYMENT_PRODUCTS, PAYMENT_SERVICES, queryText };
