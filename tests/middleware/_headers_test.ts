import assert from "node:assert/strict";
import { type Outcome, policy, rig } from "../support/hardening.ts";
import { initiationHeaders, REQUEST_ID, singlePayment } from "../support/requests.ts";
import { displayName, parseFlag } from "../../middleware/_headers.ts";

const PAYMENT = "/v1/payments/domestic";
const ACCOUNTS = "/v1/accounts";

/** One request: the path, its method and body, and headers besides the one under test. */
interface Call {
  path: string;
  init(headers: Record<string, string>): RequestInit;
}

const INITIATE: Call = {
  path: PAYMENT,
  init: (headers) => ({
    method: "POST",
    headers: { ...initiationHeaders(), ...headers },
    body: JSON.stringify(singlePayment()),
  }),
};

const READ: Call = {
  path: ACCOUNTS,
  init: (headers) => ({ headers: { "x-request-id": REQUEST_ID, "consent-id": "c-1", ...headers } }),
};

/** Sends `call` with `name` set to `value`, or without it (`undefined`). */
function withHeader(call: Call, name: string, value: string | undefined): RequestInit {
  const init = call.init({}) as { headers: Record<string, string> };
  const headers = { ...init.headers };
  if (value === undefined) delete headers[name];
  else headers[name] = value;
  // call.init() would add its default headers back: set the headers after it.
  return { ...call.init({}), headers };
}

function summary(outcome: Outcome) {
  return { status: outcome.status, code: outcome.code, path: outcome.path };
}

/**
 * Every optional header of the interface, on an operation that takes it. An empty value must
 * mean what absence means: the same answer, and nothing forwarded.
 */
const OPTIONAL: [string, Call][] = [
  ["consent-id", INITIATE],
  ["tpp-redirect-preferred", INITIATE],
  ["tpp-decoupled-preferred", INITIATE],
  ["tpp-explicit-authorisation-preferred", INITIATE],
  ["tpp-rejection-nofunds-preferred", INITIATE],
  ["tpp-redirect-uri", INITIATE],
  ["tpp-nok-redirect-uri", INITIATE],
  ["tpp-notification-uri", INITIATE],
  ["tpp-notification-content-preferred", INITIATE],
  ["tpp-brand-logging-information", INITIATE],
  ["psu-id", INITIATE],
  ["psu-id-type", INITIATE],
  ["psu-corporate-id", INITIATE],
  ["psu-corporate-id-type", INITIATE],
  ["psu-ip-port", INITIATE],
  ["psu-accept", INITIATE],
  ["psu-accept-charset", INITIATE],
  ["psu-accept-encoding", INITIATE],
  ["psu-accept-language", INITIATE],
  ["psu-user-agent", INITIATE],
  ["psu-http-method", INITIATE],
  ["psu-device-id", INITIATE],
  ["psu-geo-location", INITIATE],
  ["psu-ip-address", READ],
  ["digest", INITIATE],
  ["x-jws-signature", INITIATE],
  ["signature", INITIATE],
  ["tpp-signature-certificate", INITIATE],
  ["authorization", INITIATE],
  ["accept", INITIATE],
];

/** Required headers: empty is absent, so the answer says the header is required. */
const REQUIRED: [string, Call][] = [
  ["x-request-id", INITIATE],
  ["psu-ip-address", INITIATE],
  ["consent-id", READ],
  ["x-request-id", READ],
];

Deno.test("every header check reads an empty header as absent (table: header, empty, whitespace)", async () => {
  await using t = await rig(policy());
  for (const [name, call] of OPTIONAL) {
    for (const empty of ["", "   ", "\t"]) {
      const before = t.upstream.received.length;
      const absent = summary(await t.call(call.path, withHeader(call, name, undefined)));
      const sent = summary(await t.call(call.path, withHeader(call, name, empty)));
      assert.deepEqual(sent, absent, `${name}: ${JSON.stringify(empty)}`);
      assert.equal(sent.status, 200, name);
      const forwarded = t.upstream.received.slice(before);
      assert.equal(forwarded.length, 2, name);
      assert.equal(forwarded[1].headers.has(name), false, `${name} forwarded empty`);
    }
  }
  for (const [name, call] of REQUIRED) {
    const before = t.upstream.received.length;
    const outcome = await t.call(call.path, withHeader(call, name, ""));
    assert.equal(outcome.status, 400, name);
    assert.equal(outcome.code, "FORMAT_ERROR", name);
    assert.match(outcome.text ?? "", /is required for this operation \(it was sent empty\)$/, name);
    assert.equal(t.upstream.received.length, before, `${name}: an empty required header passed`);
    // Absent, the text says only that it is required.
    const absent = await t.call(call.path, withHeader(call, name, undefined));
    assert.equal(
      absent.text,
      `Header "${displayName(name)}" is required for this operation`,
      `${name} absent`,
    );
  }
});

Deno.test("a TAB inside a header value is allowed and forwarded as sent (RFC 9110)", async () => {
  await using t = await rig(policy());
  const values: [string, string][] = [
    ["psu-user-agent", "Mozilla/5.0\t(X11; Linux x86_64)"],
    ["psu-id", "PSU\t42"],
    ["tpp-brand-logging-information", "Brand\tName"],
    ["psu-accept-language", "ka,\ten;q=0.8"],
  ];
  for (const [i, [name, value]] of values.entries()) {
    const outcome = await t.call(PAYMENT, withHeader(INITIATE, name, value));
    assert.equal(outcome.status, 200, `${name}: ${JSON.stringify(outcome.body)}`);
    assert.equal(t.upstream.received[i].headers.get(name), value, name);
  }
  // Where a header has a format of its own, a TAB breaks it as a space would.
  const device = await t.call(PAYMENT, withHeader(INITIATE, "psu-device-id", `${REQUEST_ID}\tx`));
  assert.equal(device.status, 400);
  assert.equal(device.path, "PSU-Device-ID");
});

Deno.test("every TPP flag is read by one parser: true or false in any letter case", async () => {
  await using t = await rig(policy());
  const flags = [
    "tpp-redirect-preferred",
    "tpp-decoupled-preferred",
    "tpp-explicit-authorisation-preferred",
    "tpp-rejection-nofunds-preferred",
  ];
  let forwarded = 0;
  for (const name of flags) {
    for (const value of ["true", "TRUE", "True", "false", "FALSE", "fAlSe"]) {
      const headers = name === "tpp-redirect-preferred" && value.toLowerCase() === "true"
        ? { [name]: value, "tpp-redirect-uri": "https://tpp.example/back" }
        : { [name]: value };
      const outcome = await t.call(PAYMENT, INITIATE.init(headers));
      assert.equal(outcome.status, 200, `${name}: ${value}: ${JSON.stringify(outcome.body)}`);
      // Forwarded as sent, never dropped.
      assert.equal(t.upstream.received[forwarded++].headers.get(name), value, `${name}: ${value}`);
    }
  }
  // "TRUE" asks for redirect as "true" does: the redirect URI is then required.
  const redirect = await t.call(PAYMENT, INITIATE.init({ "tpp-redirect-preferred": "TRUE" }));
  assert.equal(redirect.status, 400);
  assert.equal(redirect.path, "TPP-Redirect-URI");
});

Deno.test("parseFlag() reads true and false in any case, nothing else", () => {
  assert.equal(parseFlag("true"), true);
  assert.equal(parseFlag("TRUE"), true);
  assert.equal(parseFlag("False"), false);
  for (const value of [null, "", "yes", "1", "on", "t", " true", "truee", "true false"]) {
    assert.equal(parseFlag(value), undefined, String(value));
  }
});
