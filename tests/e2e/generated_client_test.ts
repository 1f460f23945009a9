/**
 * The contract as a TPP's tools use it: types generated with openapi-typescript from the
 * `/openapi.json` the gateway serves, and a small openapi-fetch program that type-checks against
 * them without a cast and drives a payment, a consent and a merchant checkout through the gateway
 * and the sandbox. What the generated types leave out (a header, a security scheme, a field of an
 * answer) fails `deno check` or the run.
 */
import assert from "node:assert/strict";
import openapiTS, { astToString } from "openapi-typescript";
import { startBank } from "./bank.ts";

const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

/** The TPP's program: typed by `./schema.d.ts`, reporting what it saw as JSON on stdout. */
const PROGRAM = `
import createClient from "openapi-fetch";
import type { paths } from "./schema.d.ts";

const base = Deno.args[0];
const client = createClient<paths>({ baseUrl: base });
const merchant = createClient<paths>({
  baseUrl: base,
  headers: { Authorization: "Bearer sandbox-merchant-token" },
});
const PSU = { "X-Request-ID": "", "PSU-IP-Address": "192.0.2.17", "PSU-ID": "PSU-OK" };
const id = () => crypto.randomUUID();
const report: Record<string, unknown> = {};

function lastSegment(href: string | undefined): string {
  const segment = (href ?? "").split("/").pop();
  if (!segment) throw new Error("No authorisation link");
  return segment;
}

// A payment, authorised in the embedded approach.
const product: { "payment-service": "payments"; "payment-product": "domestic" } = {
  "payment-service": "payments",
  "payment-product": "domestic",
};
const created = await client.POST("/v1/{payment-service}/{payment-product}", {
  params: {
    path: product,
    header: { ...PSU, "X-Request-ID": id(), "TPP-Redirect-Preferred": false },
  },
  body: {
    endToEndIdentification: "E2E-TYPED-1",
    debtorAccount: { iban: "GE42SB0000000101904917" },
    instructedAmount: { currency: "GEL", amount: "12.50" },
    creditorAccount: { iban: "GE29NB0000000101904917" },
    creditorName: "Tbilisi Energy",
    remittanceInformationUnstructured: "Typed client",
  },
});
if (!created.data) throw new Error("payment: " + JSON.stringify(created.error));
const paymentId = created.data.paymentId;
const paymentAuth = {
  path: { ...product, paymentId, authorisationId: lastSegment(created.data._links.scaStatus?.href) },
};
const authPath = "/v1/{payment-service}/{payment-product}/{paymentId}/authorisations/{authorisationId}";
const password = await client.PUT(authPath, {
  params: { ...paymentAuth, header: { ...PSU, "X-Request-ID": id() } },
  body: { psuData: { password: "sandbox" } },
});
const method = password.data?.scaMethods?.[0];
if (!method) throw new Error("payment: no scaMethods " + JSON.stringify(password.error));
const selected = await client.PUT(authPath, {
  params: { ...paymentAuth, header: { "X-Request-ID": id() } },
  body: { authenticationMethodId: method.authenticationMethodId },
});
report.challenge = selected.data?.challengeData?.otpFormat;
report.approach = selected.response.headers.get("ASPSP-SCA-Approach");
const otp = await client.PUT(authPath, {
  params: { ...paymentAuth, header: { "X-Request-ID": id() } },
  body: { scaAuthenticationData: "123456" },
});
report.paymentSca = otp.data?.scaStatus;
const status = await client.GET("/v1/{payment-service}/{payment-product}/{paymentId}/status", {
  params: { path: { ...product, paymentId }, header: { "X-Request-ID": id() } },
});
report.paymentStatus = status.data?.transactionStatus;

// A consent, authorised in the embedded approach, then the account list it grants.
const consent = await client.POST("/v1/consents", {
  params: { header: { ...PSU, "X-Request-ID": id(), "TPP-Redirect-Preferred": false } },
  body: {
    access: { balances: [{ iban: "GE42SB0000000101904917" }] },
    recurringIndicator: true,
    validUntil: "9999-12-31",
    frequencyPerDay: 4,
    combinedServiceIndicator: false,
  },
});
if (!consent.data) throw new Error("consent: " + JSON.stringify(consent.error));
const consentId = consent.data.consentId;
const consentAuth = {
  path: { consentId, authorisationId: lastSegment(consent.data._links.scaStatus?.href) },
};
const consentAuthPath = "/v1/consents/{consentId}/authorisations/{authorisationId}";
const consentPassword = await client.PUT(consentAuthPath, {
  params: { ...consentAuth, header: { ...PSU, "X-Request-ID": id() } },
  body: { psuData: { password: "sandbox" } },
});
const consentMethod = consentPassword.data?.scaMethods?.[0]?.authenticationMethodId ?? "";
await client.PUT(consentAuthPath, {
  params: { ...consentAuth, header: { "X-Request-ID": id() } },
  body: { authenticationMethodId: consentMethod },
});
await client.PUT(consentAuthPath, {
  params: { ...consentAuth, header: { "X-Request-ID": id() } },
  body: { scaAuthenticationData: "123456" },
});
const accounts = await client.GET("/v1/accounts", {
  params: { header: { "X-Request-ID": id(), "Consent-ID": consentId } },
});
report.accounts = accounts.data?.accounts.map((account) => account.iban);

// A merchant's checkout order, read back, and the installment calculator.
const order = await merchant.POST("/api/v1/checkout/orders", {
  params: { header: { "X-Request-ID": id() } },
  body: {
    intent: "CAPTURE",
    items: [{ amount: "30.00", description: "Cookbook", quantity: 1, product_id: "B-1" }],
    locale: "en-US",
    shop_order_id: "SHOP-TYPED-1",
    redirect_url: "https://shop.example/back",
    show_shop_order_id_on_extract: true,
    capture_method: "AUTOMATIC",
    purchase_units: [{ amount: { currency_code: "GEL", value: 30 } }],
  },
});
if (!order.data) throw new Error("checkout: " + JSON.stringify(order.error));
const self = order.data.links.find((link) => link.rel === "self");
report.orderStatus = order.data.status;
const read = await merchant.GET("/api/v1/checkout/orders/{order_id}", {
  params: { path: { order_id: self?.order_id ?? "" }, header: { "X-Request-ID": id() } },
});
report.orderRead = read.response.status;
const plan = await merchant.GET("/v1/services/installment/calculate", {
  params: {
    query: { amount: "1200.00", client_id: "merchant-a" },
    header: { "X-Request-ID": id(), "Content-Type": "application/json" },
  },
});
report.installments = plan.data?.length;
console.log(JSON.stringify(report));
`;

Deno.test("e2e: a client generated from /openapi.json drives a payment, a consent and a checkout without a cast", async () => {
  await using bank = await startBank();
  const document = await (await bank.gateway.fetch("/openapi.json")).json();
  const dir = await Deno.makeTempDir({ prefix: "typed_client_" });
  try {
    await Deno.writeTextFile(`${dir}/schema.d.ts`, astToString(await openapiTS(document)));
    await Deno.writeTextFile(`${dir}/client.ts`, PROGRAM);
    assert.doesNotMatch(PROGRAM, /\sas\s|<any>|\bany\b|@ts-/, "the program casts nothing");
    const check = await deno(["check", "--config", CONFIG, `${dir}/client.ts`]);
    assert.equal(check.code, 0, `the program type-checks against the contract:\n${check.stderr}`);
    const run = await deno([
      "run",
      "--config",
      CONFIG,
      `--allow-net=${new URL(bank.gateway.url).host}`,
      `${dir}/client.ts`,
      bank.gateway.url,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), {
      challenge: "integer",
      approach: "EMBEDDED",
      paymentSca: "finalised",
      paymentStatus: "ACCP",
      accounts: ["GE42SB0000000101904917"],
      orderStatus: "CREATED",
      orderRead: 200,
      installments: 6,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function deno(args: string[]) {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: text(output.stdout), stderr: text(output.stderr) };
}
