/**
 * An oracle for requests of any shape: whatever reached the upstream must keep the documented
 * rules. Written from the documents (README "Every rule and its error", docs/request_hardening.md)
 * without the gateway's code, and deliberately shallower than the gateway: the rules whose
 * breach would matter most to the bank (ids that change the path, missing or malformed
 * identifying headers, control characters, unsigned signature headers, bodies of the wrong kind).
 */
import assert from "node:assert/strict";
import type { Operation } from "../../src/psd2/catalogue.ts";
import { bytesOf, type FuzzRequest, hasControl, ibanValid, upstreamRoute } from "./arbitraries.ts";
import type { Exchange } from "./fuzz.ts";
import { knownQuery } from "./mutations.ts";
import { BOOKING_STATUS, CARD_BOOKING_STATUS } from "../../src/bodies/query.ts";

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const SAFE_ID = /^[A-Za-z0-9._~-]{1,128}$/;
const IPV4 =
  /^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const CHARSET = /^[a-zA-Z0-9/\-?:().,'+ ]*$/;
const CAPS: Record<string, number> = {
  "psu-id": 50,
  "psu-id-type": 50,
  "psu-corporate-id": 50,
  "psu-corporate-id-type": 50,
  "tpp-redirect-uri": 500,
  "tpp-nok-redirect-uri": 500,
  "tpp-brand-logging-information": 255,
};

/** A header's byte string read as UTF-8 when it is UTF-8, else as Latin-1. */
function headerText(value: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytesOf(value));
  } catch {
    return value;
  }
}

function realDate(value: string): boolean {
  if (!DATE.test(value)) return false;
  const [y, m, d] = value.split("-").map(Number);
  const days = [
    31,
    y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28,
    31,
    30,
    31,
    30,
    31,
    31,
    30,
    31,
    30,
    31,
  ];
  return m >= 1 && m <= 12 && d >= 1 && d <= days[m - 1];
}

/** An absolute https URI (the scheme is case-insensitive, RFC 3986 3.1), visible ASCII only. */
function https(value: string): boolean {
  return /^https:\/\/[^/?#@\s]+([/?#][!-~]*)?$/i.test(value) && /^[!-~]+$/.test(value);
}

function depth(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  const children = Object.values(value as Record<string, unknown>).map(depth);
  return 1 + Math.max(0, ...children);
}

function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (!Array.isArray(value)) out.push(k);
      strings(v, out);
    }
  }
  return out;
}

const PAYMENT_FIELDS = [
  "endToEndIdentification",
  "instructedAmount",
  "creditorAccount",
  "creditorAgent",
  "creditorAgentName",
  "creditorName",
  "creditorAddress",
  "remittanceInformationUnstructured",
];
const TOP_FIELDS: Record<string, string[]> = {
  payments: ["debtorAccount", ...PAYMENT_FIELDS],
  "bulk-payments": ["batchBookingPreferred", "debtorAccount", "requestedExecutionDate", "payments"],
  "periodic-payments": [
    "debtorAccount",
    ...PAYMENT_FIELDS,
    "startDate",
    "endDate",
    "executionRule",
    "frequency",
    "dayOfExecution",
    "monthsOfExecution",
  ],
  consent: [
    "access",
    "recurringIndicator",
    "validUntil",
    "frequencyPerDay",
    "combinedServiceIndicator",
  ],
  checkoutOrder: [
    "intent",
    "items",
    "locale",
    "shop_order_id",
    "redirect_url",
    "show_shop_order_id_on_extract",
    "capture_method",
    "purchase_units",
  ],
  fundsConfirmation: ["cardNumber", "account", "payee", "instructedAmount"],
  signingBasket: ["paymentIds", "consentIds"],
  authorisation: ["psuData", "authenticationMethodId", "scaAuthenticationData"],
  authorisationUpdate: [
    "psuData",
    "authenticationMethodId",
    "scaAuthenticationData",
    "confirmationCode",
  ],
};
const REQUIRED: Record<string, string[]> = {
  payments: ["debtorAccount", "instructedAmount", "creditorAccount", "creditorName"],
  "bulk-payments": ["debtorAccount", "payments"],
  "periodic-payments": [
    "debtorAccount",
    "instructedAmount",
    "creditorAccount",
    "creditorName",
    "startDate",
    "frequency",
  ],
  consent: TOP_FIELDS.consent,
  checkoutOrder: ["intent", "items", "redirect_url", "purchase_units"],
  fundsConfirmation: ["account", "instructedAmount"],
  signingBasket: [],
  authorisation: [],
  authorisationUpdate: [],
};

function checkBody(
  op: Operation,
  params: Record<string, string>,
  bytes: Uint8Array,
  where: string,
) {
  if (op.body === "none") {
    assert.equal(bytes.length, 0, `A body was forwarded on ${op.id}\n${where}`);
    return;
  }
  if (bytes.length === 0) {
    assert.ok(
      op.body === "authorisation" || op.body === "authorisationUpdate",
      `No body was forwarded on ${op.id}\n${where}`,
    );
    return;
  }
  const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes); // throws when not UTF-8
  if (op.body === "payment" && params["payment-product"].startsWith("pain.001-")) {
    assert.doesNotMatch(text, /<!DOCTYPE/i, where);
    return;
  }
  const value = JSON.parse(text);
  assert.ok(depth(value) <= 16, `JSON nested deeper than 16\n${where}`);
  for (const s of strings(value)) {
    assert.ok(!hasControl(s), `Control character in the body\n${where}`);
  }
  const kind = op.body === "payment" ? params["payment-service"] : op.body;
  if (value === null && kind.startsWith("authorisation")) return;
  assert.ok(
    value && typeof value === "object" && !Array.isArray(value),
    `Body not an object\n${where}`,
  );
  for (const key of Object.keys(value)) {
    assert.ok(TOP_FIELDS[kind].includes(key), `Unknown field "${key}" forwarded\n${where}`);
  }
  for (const key of REQUIRED[kind]) assert.ok(key in value, `"${key}" missing\n${where}`);
  if (op.body === "payment") {
    const payments = kind === "bulk-payments" ? value.payments : [value];
    assert.ok(Array.isArray(payments) && payments.length > 0, where);
    assert.ok(ibanOk(value.debtorAccount), `debtorAccount\n${where}`);
    for (const p of payments) {
      assert.ok(typeof p.creditorName === "string" && p.creditorName.length >= 1, where);
      assert.ok(p.creditorName.length <= 70 && CHARSET.test(p.creditorName), where);
      assert.ok(ibanOk(p.creditorAccount), `creditorAccount\n${where}`);
      assert.match(p.instructedAmount?.amount ?? "", /^[0-9]{1,14}(\.[0-9]{1,3})?$/, where);
    }
  }
  if (kind === "periodic-payments") checkMonths(value, where);
  if (op.body === "signingBasket") {
    const ids = [...(value.paymentIds ?? []), ...(value.consentIds ?? [])];
    assert.ok(ids.length > 0 && ids.every((id) => SAFE_ID.test(id)), `Basket ids\n${where}`);
  }
  if (op.body === "fundsConfirmation") {
    assert.match(value.instructedAmount?.amount ?? "", /^[0-9]{1,14}(\.[0-9]{1,3})?$/, where);
    assert.ok(ibanOk(value.account), `account\n${where}`);
  }
  if (op.body === "consent") {
    assert.ok(realDate(value.validUntil), where);
    assert.ok(Number.isInteger(value.frequencyPerDay) && value.frequencyPerDay >= 1, where);
    assert.ok(value.frequencyPerDay <= 4, where);
  }
}

/**
 * The standard's rule for monthsOfExecution: sent if and only if the frequency is
 * MonthlyVariable, 1 to 11 distinct months, each "1" to "12".
 */
function checkMonths(value: { frequency?: unknown; monthsOfExecution?: unknown }, where: string) {
  const months = value.monthsOfExecution;
  if (value.frequency !== "MonthlyVariable") {
    assert.equal(months, undefined, `monthsOfExecution without MonthlyVariable\n${where}`);
    return;
  }
  assert.ok(Array.isArray(months), `MonthlyVariable without monthsOfExecution\n${where}`);
  assert.ok(months.length >= 1 && months.length <= 11, `monthsOfExecution count\n${where}`);
  assert.equal(new Set(months).size, months.length, `monthsOfExecution repeats\n${where}`);
  for (const m of months) {
    assert.ok(typeof m === "string" && /^([1-9]|1[0-2])$/.test(m), `month "${m}"\n${where}`);
  }
}

function ibanOk(reference: unknown): boolean {
  if (!reference || typeof reference !== "object") return false;
  const iban = (reference as { iban?: unknown }).iban;
  return iban === undefined ||
    (typeof iban === "string" && /^[A-Z]{2}[0-9]{2}[a-zA-Z0-9]{1,30}$/.test(iban) &&
      ibanValid(iban));
}

function checkQuery(op: Operation, query: string, where: string) {
  const params = new URLSearchParams(query);
  const names = [...params.keys()];
  assert.equal(new Set(names).size, names.length, `A query parameter given twice\n${where}`);
  for (const [k, v] of params) {
    assert.ok(knownQuery(op).includes(k), `Query parameter "${k}" forwarded\n${where}`);
    assert.ok(!hasControl(k) && !hasControl(v), `Control character in the query\n${where}`);
  }
  if (op.id === "getTransactionList" || op.id === "getCardAccountTransactionList") {
    const status = params.get("bookingStatus");
    const statuses = op.id === "getTransactionList" ? BOOKING_STATUS : CARD_BOOKING_STATUS;
    assert.ok((statuses as readonly string[]).includes(status ?? ""), where);
    const from = params.get("dateFrom");
    const to = params.get("dateTo");
    if (from !== null) assert.ok(realDate(from), where);
    if (to !== null) assert.ok(realDate(to), where);
    if (from !== null && to !== null) assert.ok(from <= to, where);
    const delta = params.has("entryReferenceFrom") || params.get("deltaList") === "true";
    assert.ok(from !== null || delta || status === "information", `dateFrom missing\n${where}`);
  }
  if (op.id === "calculateInstallment") {
    assert.match(params.get("amount") ?? "", /^[0-9]{1,14}(\.[0-9]{1,3})?$/, where);
    assert.match(params.get("client_id") ?? "", SAFE_ID, where);
  }
  for (const name of ["page", "page-size"]) {
    const value = params.get(name);
    if (value !== null) assert.match(value, /^(0|[1-9][0-9]*)$/, where);
  }
}

function checkHeaders(op: Operation, got: Headers, where: string) {
  const get = (name: string) => got.get(name);
  const takes = (name: string) => op.headers.includes(name);
  for (const [name, value] of got) {
    if (name.startsWith("x-forwarded-")) continue;
    const text = headerText(value);
    // TAB is allowed inside a value (RFC 9110); an empty interface header is never forwarded.
    assert.ok(
      !hasControl(text.replaceAll("\t", " ")),
      `Header ${name} with a control character forwarded\n${where}`,
    );
    if (takes(name)) assert.notEqual(value, "", `Header ${name} forwarded empty\n${where}`);
    if (CAPS[name]) assert.ok([...text].length <= CAPS[name], `${name} over its cap\n${where}`);
    else assert.ok(value.length <= 16384, `${name} over 16384 bytes\n${where}`);
  }
  for (const name of op.required) {
    // Content-Type is judged with the body; Authorization is the bearer_token check's, which the
    // default policy leaves off (the bank's core checks its own credentials).
    if (name === "content-type" || name === "authorization") continue;
    assert.notEqual(get(name), null, `${name} missing\n${where}`);
  }
  const id = get("x-request-id");
  if (id !== null && takes("x-request-id")) assert.match(id, UUID, where);
  const ip = get("psu-ip-address");
  if (ip !== null && takes("psu-ip-address")) assert.match(ip, IPV4, where);
  const consent = get("consent-id");
  if (consent !== null && takes("consent-id")) {
    assert.match(consent, SAFE_ID, where);
    assert.ok(consent !== "." && consent !== "..", where);
  }
  const checks: [string, RegExp][] = [
    ["psu-device-id", UUID],
    ["psu-http-method", /^(GET|POST|PUT|PATCH|DELETE)$/],
    ["psu-ip-port", /^[1-9][0-9]{0,4}$/],
    ["psu-geo-location", /^GEO:-?[0-9]{1,2}\.[0-9]{6};-?[0-9]{1,3}\.[0-9]+$/],
    ["tpp-redirect-preferred", /^(true|false)$/i],
    ["tpp-decoupled-preferred", /^(true|false)$/i],
    ["tpp-explicit-authorisation-preferred", /^(true|false)$/i],
    ["tpp-rejection-nofunds-preferred", /^(true|false)$/i],
    ["tpp-notification-content-preferred", /^status=(SCA|PROCESS|LAST)(, ?(SCA|PROCESS|LAST))*$/],
  ];
  for (const [name, pattern] of checks) {
    const value = get(name);
    if (value !== null && takes(name)) assert.match(value, pattern, `${name}\n${where}`);
  }
  for (const name of ["tpp-redirect-uri", "tpp-nok-redirect-uri", "tpp-notification-uri"]) {
    const value = get(name);
    if (value !== null && takes(name)) assert.ok(https(value), `${name} "${value}"\n${where}`);
  }
  if (takes("tpp-redirect-uri") && get("tpp-redirect-preferred")?.toLowerCase() === "true") {
    assert.notEqual(get("tpp-redirect-uri"), null, where);
  }
  for (const name of ["digest", "x-jws-signature", "signature", "x-ssl-client-cert"]) {
    // No certificate is trusted by the default policy: nothing signed can pass.
    if (takes(name) || name === "x-ssl-client-cert") {
      assert.equal(get(name), null, `${name}\n${where}`);
    }
  }
}

/** Whatever reached the upstream keeps the documented rules. */
export function assertForwardedKeepsRules(request: FuzzRequest, exchange: Exchange): void {
  if (exchange.reached.length === 0) return;
  const got = exchange.reached[0].recorded;
  const where = `${request.mutation}\n${request.method} ${
    request.target.slice(0, 300)
  } -> ${got.method} ${got.path}`;
  assert.equal(got.method, request.method, where);
  const [path, query = ""] = got.path.split(/\?(.*)/s);
  const route = upstreamRoute(got.method, path);
  assert.equal(route.kind, "op", `Forwarded to a path of no operation\n${where}`);
  if (route.kind !== "op") return;
  const op = route.op;
  for (const [name, raw] of Object.entries(route.params)) {
    const value = decodeURIComponent(raw);
    const values = op.params[name]?.values;
    if (values) assert.ok(values.includes(value), `${name} "${value}" forwarded\n${where}`);
    else {
      assert.match(value, SAFE_ID, `${name} "${value}" forwarded\n${where}`);
      assert.ok(!/^\.+$/.test(value), `${name} "${value}" forwarded\n${where}`);
    }
  }
  const sentQuery = request.target.includes("?")
    ? request.target.slice(request.target.indexOf("?") + 1)
    : "";
  assert.equal(query, sentQuery, `The query changed on the way\n${where}`);
  checkQuery(op, query, where);
  checkHeaders(op, got.headers, where);
  assert.deepEqual(got.bytes, bytesOf(request.body ?? ""), `Body bytes changed\n${where}`);
  checkBody(op, route.params, got.bytes, where);
}
