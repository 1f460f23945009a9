import assert from "node:assert/strict";
import { Hono } from "hono";
import { contentType } from "../../middleware/content_type.ts";
import { operation } from "../../src/psd2/catalogue.ts";
import type { GatewayEnv } from "../../src/core/check.ts";
import { GatewayError } from "../../src/psd2/errors.ts";
import { buildContext } from "../support/sections.ts";
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { initiationHeaders, PAIN_001, REQUEST_ID, singlePayment } from "../support/requests.ts";
import { FORM_TYPE, periodicForm } from "../support/periodic_form.ts";
import type { LevelInput } from "../support/policies.ts";

const OFFERED: LevelInput = {
  path_params: { offered_products: ["domestic", "pain.001-sepa-credit-transfers"] },
};
const PAYMENT = JSON.stringify(singlePayment());

function post(contentType: string | undefined, body: string) {
  const headers = initiationHeaders();
  if (contentType === undefined) delete headers["content-type"];
  else headers["content-type"] = contentType;
  return { method: "POST", headers, body };
}

Deno.test("contentType() rejects a JSON body sent as anything but application/json with 415", async () => {
  await using t = await rig(policy(OFFERED));
  for (
    const type of ["text/plain", "application/xml", "application/x-www-form-urlencoded", "json"]
  ) {
    assertRejected(await t.call("/v1/payments/domestic", post(type, PAYMENT)), {
      status: 415,
      code: "CONTENT_TYPE_INVALID",
      path: "Content-Type",
      text: /must be "application\/json"/,
    }, t.upstream);
  }
});

Deno.test("contentType() rejects a body without Content-Type and a charset other than UTF-8", async () => {
  await using t = await rig(policy(OFFERED));
  assertRejected(await t.call("/v1/payments/domestic", post(undefined, PAYMENT)), {
    status: 415,
    code: "CONTENT_TYPE_INVALID",
  }, t.upstream);
  assertRejected(
    await t.call("/v1/payments/domestic", post("application/json; charset=iso-8859-1", PAYMENT)),
    { status: 415, code: "CONTENT_TYPE_INVALID" },
    t.upstream,
  );
});

Deno.test("contentType() accepts application/json with or without a UTF-8 charset", async () => {
  await using t = await rig(policy(OFFERED));
  const types = [
    "application/json",
    "Application/JSON; charset=UTF-8",
    'application/json;charset="utf-8"',
  ];
  for (const [i, type] of types.entries()) {
    assertForwarded(await t.call("/v1/payments/domestic", post(type, PAYMENT)), t.upstream, i + 1);
  }
});

Deno.test("contentType() wants XML for pain.001 products and JSON refused there", async () => {
  await using t = await rig(policy(OFFERED));
  const path = "/v1/payments/pain.001-sepa-credit-transfers";
  assertRejected(await t.call(path, post("application/json", PAYMENT)), {
    status: 415,
    code: "CONTENT_TYPE_INVALID",
    text: /"application\/xml" or "text\/xml" for a pain\.001 payment product/,
  }, t.upstream);
  assertForwarded(await t.call(path, post("application/xml", PAIN_001)), t.upstream);
  assertForwarded(await t.call(path, post("text/xml; charset=utf-8", PAIN_001)), t.upstream, 2);
});

Deno.test("contentType() lets an authorisation start without a body and without Content-Type", async () => {
  await using t = await rig(policy());
  assertForwarded(
    await t.call("/v1/consents/c-1/authorisations", {
      method: "POST",
      headers: { "x-request-id": REQUEST_ID },
    }),
    t.upstream,
  );
});

Deno.test("contentType() requires Content-Type on the installment calculator, as the document does", async () => {
  await using t = await rig(policy());
  const path = "/v1/services/installment/calculate?amount=100.00&client_id=shop-1";
  assertRejected(await t.call(path), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "Content-Type",
  }, t.upstream);
  assertRejected(await t.call(path, { headers: { "content-type": "text/plain" } }), {
    status: 415,
    code: "CONTENT_TYPE_INVALID",
  }, t.upstream);
  assertForwarded(
    await t.call(path, {
      headers: { "content-type": "application/json", authorization: "Bearer merchant-token" },
    }),
    t.upstream,
  );
});

Deno.test("contentType() takes multipart/form-data for a periodic pain.001 payment only", async () => {
  await using t = await rig(policy(OFFERED));
  const form = periodicForm();
  assertForwarded(
    await t.call("/v1/periodic-payments/pain.001-sepa-credit-transfers", post(FORM_TYPE, form)),
    t.upstream,
  );
  for (
    const path of ["/v1/payments/pain.001-sepa-credit-transfers", "/v1/periodic-payments/domestic"]
  ) {
    assertRejected(
      await t.call(path, post(FORM_TYPE, form)),
      {
        status: 415,
        code: "CONTENT_TYPE_INVALID",
        path: "Content-Type",
      },
      t.upstream,
      1,
    );
  }
});

/** A body fetch() sends without a Content-Type of its own (a string would get text/plain). */
function rawPost(body: BodyInit, extra: Record<string, string> = {}): RequestInit {
  const headers: Record<string, string> = { ...initiationHeaders(), ...extra };
  delete headers["content-type"];
  return { method: "POST", headers, body };
}

Deno.test("contentType() refuses a body sent without Content-Type, with a length or chunked", async () => {
  await using t = await rig(policy(OFFERED));
  const bytes = new TextEncoder().encode(PAYMENT);
  const chunked = () =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    });
  for (const body of [() => bytes, chunked]) {
    assertRejected(await t.call("/v1/payments/domestic", rawPost(body())), {
      status: 415,
      code: "CONTENT_TYPE_INVALID",
      path: "Content-Type",
      text: /^Header "Content-Type" must be "application\/json", in UTF-8$/,
    }, t.upstream);
  }
});

/** Runs the check built by hand for `id` on a request with exactly `headers`. */
async function judge(id: string, headers: [string, string][], params: Record<string, string> = {}) {
  const check = contentType.create(contentType.options.parse({}), buildContext(operation(id)));
  if (!check) return "not built";
  const app = new Hono<GatewayEnv>();
  let outcome = "passed";
  app.post("/", async (c, next) => {
    c.set("params", params);
    try {
      await check(c, next);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      outcome = `${error.status} ${error.message}`;
      return c.text("refused");
    }
  }, (c) => c.text("ok"));
  await app.request("/", { method: "POST", headers });
  return outcome;
}

Deno.test("contentType() judges a request without a body only where Content-Type is required", async () => {
  const domestic = { "payment-service": "payments", "payment-product": "domestic" };
  // No Content-Length, no Transfer-Encoding: no body, nothing to judge (body_schema wants one).
  assert.equal(await judge("initiatePayment", [], domestic), "passed");
  assert.equal(await judge("initiatePayment", [["content-length", "0"]], domestic), "passed");
  assert.match(await judge("initiatePayment", [["content-length", "12"]], domestic), /^415 /);
  assert.match(
    await judge("initiatePayment", [["transfer-encoding", "chunked"]], domestic),
    /^415 /,
  );
  // Operations without a body and without the header in the interface: nothing built.
  assert.equal(await judge("getAccountList", []), "not built");
  assert.equal(await judge("deleteConsent", []), "not built");
});

Deno.test("contentType() wants JSON on a pain.001 payment's authorisation: only its initiation is XML", async () => {
  const pain = {
    "payment-service": "payments",
    "payment-product": "pain.001-sepa-credit-transfers",
    paymentId: "p-1",
  };
  assert.equal(
    await judge("startPaymentAuthorisation", [["content-type", "application/json"], [
      "content-length",
      "2",
    ]], pain),
    "passed",
  );
  assert.equal(
    await judge("startPaymentAuthorisation", [["content-type", "application/xml"], [
      "content-length",
      "2",
    ]], pain),
    '415 Header "Content-Type" must be "application/json", in UTF-8',
  );
});
