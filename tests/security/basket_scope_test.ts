/**
 * Attack: TPP B puts TPP A's payment (or consent) into a signing basket of its own, so that the
 * PSU, authorising B's basket, authorises A's payment for B, against a core that checks no owner
 * of a basket's ids. The gateway learnt each payment's TPP from its initiation's answer, and each
 * consent's from its creation, and refuses the basket at the edge (400 RESOURCE_UNKNOWN), the id
 * in another case too; B reading or authorising A's basket is refused as well (403).
 */
import assert from "node:assert/strict";
import type { TestGateway } from "../support/gateway.ts";
import { onEachStoreGateway } from "../support/each_store.ts";
import { startUpstream } from "../support/upstream.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { consentBody, initiationHeaders, singlePayment } from "../support/requests.ts";

const issuer = await tokenIssuer();

/** A core that takes any basket: payments P-1, ..., consents c-1, ..., baskets b-1, .... */
function trustingCore() {
  const made = { P: 0, c: 0, b: 0 };
  return startUpstream((request) => {
    const path = new URL(request.url).pathname;
    if (request.method !== "POST") return Response.json({ transactionStatus: "RCVD" });
    if (path.startsWith("/psd2/v1/payments/")) {
      return Response.json({ transactionStatus: "RCVD", paymentId: `P-${++made.P}` }, {
        status: 201,
      });
    }
    if (path === "/psd2/v1/consents") {
      return Response.json({ consentStatus: "received", consentId: `c-${++made.c}` }, {
        status: 201,
      });
    }
    if (path.endsWith("/authorisations")) {
      return Response.json({ scaStatus: "received", authorisationId: "a-1" }, { status: 201 });
    }
    return Response.json({ transactionStatus: "RCVD", basketId: `b-${++made.b}` }, { status: 201 });
  });
}

async function post(gateway: TestGateway, tpp: string, path: string, body: unknown) {
  const response = await gateway.fetch(path, {
    method: "POST",
    headers: initiationHeaders({
      "x-request-id": crypto.randomUUID(),
      ...await issuer.headers(tpp),
    }),
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

onEachStoreGateway("TPP B cannot basket TPP A's payment or consent, nor authorise A's basket", {
  core: trustingCore,
  policy: {
    defaults: {
      bearer_token: issuer.options,
      consent_scope: { mode: "enforce" },
      basket_scope: { mode: "enforce" },
    },
  },
}, async (gateway, core) => {
  const payment =
    (await post(gateway, "tpp-a", "/v1/payments/sepa-credit-transfers", singlePayment()))
      .body.paymentId as string;
  const consent = (await post(gateway, "tpp-a", "/v1/consents", consentBody())).body
    .consentId as string;
  const basketsAtCore = () =>
    core.received.filter((r) => r.path.startsWith("/psd2/v1/signing-baskets")).length;
  for (
    const body of [
      { paymentIds: [payment] },
      { paymentIds: [payment.toLowerCase()] },
      { consentIds: [consent.toUpperCase()] },
    ]
  ) {
    const stolen = await post(gateway, "tpp-b", "/v1/signing-baskets", body);
    assert.equal(stolen.status, 400, JSON.stringify(body));
    assert.equal(stolen.body.tppMessages[0].code, "RESOURCE_UNKNOWN");
  }
  assert.equal(basketsAtCore(), 0, "no basket of B's reached the core");
  const own = await post(gateway, "tpp-a", "/v1/signing-baskets", { paymentIds: [payment] });
  assert.equal(own.status, 201);
  const hijack = await post(
    gateway,
    "tpp-b",
    `/v1/signing-baskets/${own.body.basketId}/authorisations`,
    {},
  );
  assert.equal(hijack.status, 403);
  assert.equal(hijack.body.tppMessages[0].code, "RESOURCE_UNKNOWN");
  assert.equal(basketsAtCore(), 1, "only A's own basket reached the core");
});
