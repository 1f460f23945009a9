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
