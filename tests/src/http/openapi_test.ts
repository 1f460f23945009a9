import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { DEFAULT_POLICY, startGateway } from "../../support/gateway.ts";
import { startUpstream } from "../../support/upstream.ts";
import { policy as hardeningPolicy } from "../../support/hardening.ts";
import { type PolicyInput, policyYaml } from "../../support/policies.ts";
import { OPERATIONS } from "../../../src/psd2/catalogue.ts";
import { parsePolicy } from "../../../src/policy/load.ts";
import { PIPELINE } from "../../../middleware/mod.ts";
import { openApiDocument } from "../../../src/http/openapi.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const TODAY = new Date().toISOString().slice(0, 10);

/** The document of a policy text (`defaults` lines as the hardening tests write them). */
function documentOf(input: PolicyInput): Json {
  const policy = parsePolicy("test-policy.yaml", policyYaml(input), {
    ...PIPELINE,
    env: (name) => name === "UPSTREAM_URL" ? "http://127.0.0.1:9" : Deno.env.get(name),
  });
  return openApiDocument(policy, TODAY);
}

async function assertValidOpenApi(document: Json) {
  const result = await new Validator().validate(document);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 3000));
}

Deno.test("GET /openapi.json is a valid OpenAPI 3.1 document with every operation of the catalogue", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: DEFAULT_POLICY, upstream: upstream.url });
  const response = await gateway.fetch("/openapi.json");
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
  const document = await response.json();
  assert.equal(document.openapi, "3.1.0");
  await assertValidOpenApi(document);
  for (const op of OPERATIONS) {
    const entry = document.paths[op.path]?.[op.method.toLowerCase()];
    assert.equal(entry?.operationId, op.id, `${op.method} ${op.path}`);
    for (const status of op.success) {
      assert.ok(entry.responses[String(status)], `${op.id} ${status}`);
    }
    for (const status of [400, 401, 403, 404, 405, 406, 409, 429]) {
      assert.ok(entry.responses[String(status)], `${op.id} ${status}`);
    }
  }
  assert.equal(upstream.received.length, 0, "the document is the gateway's own");
});

Deno.test("openApiDocument() lists only the payment products the policy offers", async () => {
  const domestic = documentOf(hardeningPolicy({ path_params: { offered_products: ["domestic"] } }));
  await assertValidOpenApi(domestic);
  const initiate = domestic.paths["/v1/{payment-service}/{payment-product}"].post;
  const product = initiate.parameters.find((p: Json) => p.name === "payment-product");
  assert.deepEqual(product.schema.enum, ["domestic"]);
  assert.deepEqual(Object.keys(initiate.requestBody.content), ["application/json"]);
  const pain = documentOf(
    hardeningPolicy({
      path_params: { offered_products: ["domestic", "pain.001-sepa-credit-transfers"] },
    }),
  );
  await assertValidOpenApi(pain);
  const both = pain.paths["/v1/{payment-service}/{payment-product}"].post;
  assert.deepEqual(
    both.parameters.find((p: Json) => p.name === "payment-product").schema.enum,
    ["domestic", "pain.001-sepa-credit-transfers"],
  );
  assert.deepEqual(Object.keys(both.requestBody.content), [
    "application/json",
    "application/xml",
    "multipart/form-data",
  ]);
  const form = both.requestBody.content["multipart/form-data"];
  assert.deepEqual(form.schema.required, ["xml_sct", "json_standingorderType"]);
  assert.equal(form.encoding.json_standingorderType.contentType, "application/json");
});

Deno.test("openApiDocument() describes headers, parameters and bodies with the policy's options", () => {
  const document = documentOf(hardeningPolicy({
    consent_id: { max_length: 64 },
    psu_ip_address: { allow_ipv6: true },
    query_params: { max_page_size: 25 },
    header_limits: { caps: { "PSU-ID": 20 } },
    tpp_redirect_uri: { redirect_only: true },
    body_schema: { unknown_fields: "forward", max_bulk_payments: 7 },
  }));
  const header = (entry: Json, name: string) =>
    entry.parameters.find((p: Json) => p.in === "header" && p.name === name);
  const initiate = document.paths["/v1/{payment-service}/{payment-product}"].post;
  assert.equal(header(initiate, "Consent-ID").schema.maxLength, 64);
  assert.equal(header(initiate, "Consent-ID").required, false);
  assert.deepEqual(header(initiate, "PSU-IP-Address").schema.anyOf, [
    { format: "ipv4" },
    { format: "ipv6" },
  ]);
  assert.equal(header(initiate, "PSU-IP-Address").required, true);
  assert.equal(header(initiate, "PSU-ID").schema.maxLength, 20);
  assert.equal(header(initiate, "TPP-Redirect-URI").required, true);
  assert.equal(header(initiate, "X-Request-ID").schema.format, "uuid");
  assert.equal(header(initiate, "TPP-Redirect-Preferred").schema.type, "boolean");
  const accounts = document.paths["/v1/accounts"].get;
  assert.equal(header(accounts, "Consent-ID").required, true);
  const products = document.paths["/v1/products/{locale}"].get;
  const size = products.parameters.find((p: Json) => p.name === "page-size");
  assert.deepEqual(size.schema, { type: "integer", minimum: 1, maximum: 25 });
  const list = document.paths["/v1/accounts/{account-id}/transactions"].get;
  assert.deepEqual(
    list.parameters.filter((p: Json) => p.in === "query").map((p: Json) => p.name),
    [
      "dateFrom",
      "dateTo",
      "entryReferenceFrom",
      "bookingStatus",
      "deltaList",
      "withBalance",
      "pageIndex",
      "itemsPerPage",
    ],
  );
  // The bodies are the body_schema's own zod schemas, with these options.
  const schemas = document.components.schemas;
  assert.equal(schemas.BulkPayment.properties.payments.maxItems, 7);
  assert.notEqual(schemas.SinglePayment.additionalProperties, false);
  assert.equal(schemas.SinglePayment.properties.creditorName.maxLength, 70);
  assert.deepEqual(schemas.SinglePayment.properties.chargeBearer.enum, [
    "DEBT",
    "CRED",
    "SHAR",
    "SLEV",
  ]);
  assert.deepEqual(
    schemas.Error401.properties.tppMessages.items.allOf[1].properties.code.enum
      .includes("SIGNATURE_INVALID"),
    true,
  );
});

Deno.test("openApiDocument() names the security schemes the policy enforces", async () => {
  const open = documentOf(hardeningPolicy());
  assert.deepEqual(Object.keys(open.components.securitySchemes).sort(), [
    "bearerAuth",
    "httpSignature",
    "jwsSignature",
    "mutualTLS",
  ]);
  // Tokens unverified, but `authorization` requires one on the merchant operations.
  for (
    const [path, method] of [["/api/v1/checkout/orders", "post"], [
      "/v1/services/installment/calculate",
      "get",
    ]]
  ) {
    assert.deepEqual(open.paths[path][method].security[0], { bearerAuth: [] }, path);
  }
  // Sent when the TPP wants: each scheme optional.
  assert.deepEqual(open.paths["/v1/consents"].post.security, [
    {},
    { mutualTLS: [] },
    { jwsSignature: [] },
    { httpSignature: [] },
  ]);
  const strict = documentOf(hardeningPolicy({
    tpp_certificate: { required: true },
    jws_signature: { required: true },
    http_signature: { mode: "off" },
    bearer_token: { mode: "enforce", required: true, jwks_url: "https://auth.example/jwks" },
  }));
  await assertValidOpenApi(strict);
  assert.deepEqual(strict.components.securitySchemes.mutualTLS.type, "mutualTLS");
  assert.deepEqual(strict.components.securitySchemes.bearerAuth, {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
  });
  assert.equal(strict.components.securitySchemes.httpSignature, undefined);
  assert.deepEqual(strict.paths["/v1/consents"].post.security, [
    { mutualTLS: [], bearerAuth: [], jwsSignature: [] },
  ]);
});

Deno.test("deno task openapi prints the document the gateway serves", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-env", "main.ts", "openapi", "config/policy.yaml"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  const printed = JSON.parse(new TextDecoder().decode(output.stdout));
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: DEFAULT_POLICY, upstream: upstream.url });
  const served = await (await gateway.fetch("/openapi.json")).json();
  assert.deepEqual(printed, served);
});

Deno.test("openApiDocument() declares the headers and answer fields the gateway requires and sends", () => {
  const doc = documentOf(hardeningPolicy());
  const calculator = doc.paths["/v1/services/installment/calculate"].get;
  const contentType = calculator.parameters.find((p: { name: string }) =>
    p.name === "Content-Type"
  );
  assert.deepEqual(contentType?.required, true, "the calculator requires Content-Type");
  const auth = "/v1/{payment-service}/{payment-product}/{paymentId}/authorisations";
  const start = doc.paths[auth].post;
  assert.ok(
    start.parameters.some((p: { name: string }) => p.name === "TPP-Decoupled-Preferred"),
    "TPP-Decoupled-Preferred on starting an authorisation",
  );
  const started = doc.components
    .schemas[start.responses["201"].content["application/json"].schema.$ref?.split("/").pop()] ??
    start.responses["201"].content["application/json"].schema;
  assert.deepEqual(started.required, ["scaStatus", "authorisationId", "_links"]);
  for (const field of ["scaMethods", "chosenScaMethod", "challengeData"]) {
    assert.ok(started.properties[field], field);
  }
  const put = doc.paths[`${auth}/{authorisationId}`].put.responses["200"];
  assert.ok(put.headers["ASPSP-SCA-Approach"], "ASPSP-SCA-Approach on PUT 200");
  assert.ok(put.content["application/json"].schema.properties.challengeData);
  const created = doc.paths["/v1/{payment-service}/{payment-product}"].post.responses["201"];
  assert.ok(created.headers["ASPSP-Notification-Support"], "ASPSP-Notification-Support on 201");
  assert.ok(created.headers["ASPSP-Notification-Content"], "ASPSP-Notification-Content on 201");
  assert.ok(created.content["application/json"].schema.required.includes("_links"));
  const status = doc.paths[`${auth}/{authorisationId}`].get.responses["200"];
  const statusBody = status.content["application/json"].schema;
  assert.ok(statusBody.properties.tppMessages, "tppMessages, as the standard spells it");
  assert.equal(statusBody.properties.tppMessage, undefined);
});

Deno.test("openApiDocument() declares every locale spelling the gateway takes", () => {
  const document = documentOf(hardeningPolicy({}));
  const products = document.paths["/v1/products/{locale}"].get;
  const locale = products.parameters.find((p: Json) => p.name === "locale");
  assert.deepEqual([...locale.schema.enum].sort(), ["en", "en-US", "ge", "ka"]);
  const order = document.components.schemas.CheckoutOrder;
  assert.deepEqual([...order.properties.locale.enum].sort(), ["en", "en-US", "ge", "ka"]);
});
