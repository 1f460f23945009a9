/**
 * A token issued to one TPP does not pass with another TPP's certificate under the production
 * example: it requires every token to be bound to the presented certificate (`require_binding`).
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { startGateway } from "../support/gateway.ts";
import { createCa, issue, nginxHeader } from "../support/pki.ts";
import { buildPolicy } from "../support/policies.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { startUpstream } from "../support/upstream.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";

const production = parse(await Deno.readTextFile("config/production.example.yaml")) as {
  defaults: { bearer_token: { require_binding?: boolean } };
};

Deno.test("the production example's tokens count only with the certificate they were issued for", async () => {
  const requireBinding = production.defaults.bearer_token.require_binding;
  assert.equal(requireBinding, true);
  const ca = await createCa();
  const mallory = await issue(ca, { orgId: "PSDGE-NBG-666666" });
  const issuer = await tokenIssuer();
  await using core = startUpstream(() =>
    Response.json({ transactionStatus: "RCVD", paymentId: "p-1" }, { status: 201 })
  );
  await using gateway = await startGateway({
    policy: buildPolicy({
      trust: { anchors: [ca.pem] },
      defaults: {
        tpp_certificate: { form: "nginx", required: true },
        bearer_token: { ...issuer.options, required: true, require_binding: requireBinding },
      },
    }),
    upstream: core.url,
  });
  // The token of TPP 000001, without cnf, presented by Mallory with Mallory's own certificate.
  const response = await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers: initiationHeaders({
      "x-request-id": crypto.randomUUID(),
      ...await issuer.headers("PSDGE-NBG-000001"),
      "x-ssl-client-cert": nginxHeader(mallory),
    }),
    body: JSON.stringify(singlePayment()),
  });
  const body = await response.json();
  assert.equal(response.status, 401, JSON.stringify(body));
  assert.equal(body.tppMessages[0].code, "TOKEN_INVALID");
  assert.equal(core.received.length, 0, "the core never saw it");
});
