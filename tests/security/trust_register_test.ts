/**
 * TPPs whose certificates outlive their authorisation (issue 20 item 4): one test per attack,
 * each asserting the attacker's answer and what reached the core (a recording upstream on
 * 127.0.0.1). The register is a file of the test, or served over HTTP by it.
 */
import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { createCa, issue, nginxHeader } from "../support/pki.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";
import { initiationHeaders } from "../support/requests.ts";
import { PAYMENT_BODY, PAYMENT_TARGET, signJws } from "../support/signing.ts";

const ca = await createCa();
const authorised = await issue(ca, { orgId: "PSDGE-NBG-123456" });
const unlisted = await issue(ca, { orgId: "PSDGE-NBG-999999" });
const withdrawn = await issue(ca, { orgId: "PSDGE-NBG-100042" });
/** An AIS-only TPP whose certificate (wrongly, or from before) carries PSP_PI too. */
const aisOnly = await issue(ca, { orgId: "PSDGE-NBG-200017", roles: ["PSP_PI", "PSP_AI"] });
/** Authorised in Lithuania, passported to Georgia for AIS only. */
const foreign = await issue(ca, { orgId: "PSDLT-BOL-LB000123" });

const registerFile = await Deno.makeTempFile({ suffix: ".json" });
globalThis.addEventListener("unload", () => Deno.removeSync(registerFile));
await Deno.copyFile("config/tpp_register.example.json", registerFile);

type Register = NonNullable<PolicyInput["trust"]>["register"];

function policy(
  register: Register,
  defaults: LevelInput = { tpp_certificate: { required: true } },
): PolicyInput {
  return buildPolicy({ trust: { anchors: [ca.pem], register }, defaults });
}

const FILE: Register = { source: registerFile, country: "GE" };

async function send(
  policyText: PolicyInput,
  headers: Record<string, string>,
  request: { path: string; method: string; body?: string } = {
    path: PAYMENT_TARGET,
    method: "POST",
    body: PAYMENT_BODY,
  },
) {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: policyText, upstream: upstream.url });
  const response = await gateway.fetch(request.path, {
    method: request.method,
    body: request.body,
    headers: { ...initiationHeaders(), "x-request-id": crypto.randomUUID(), ...headers },
  });
  return { status: response.status, body: await response.json(), received: upstream.received };
}

const ACCOUNTS = { path: "/v1/accounts", method: "GET" };

Deno.test("register: a TPP with a valid certificate but absent from the register is refused", async () => {
  const { status, body, received } = await send(policy(FILE), {
    "x-ssl-client-cert": nginxHeader(unlisted),
  });
  assert.equal(status, 401);
  assert.equal(body.tppMessages[0].code, "CERTIFICATE_BLOCKED");
  assert.match(body.tppMessages[0].text, /"PSDGE-NBG-999999" is not in the TPP register/);
  assert.equal(received.length, 0);
  const ok = await send(policy(FILE), { "x-ssl-client-cert": nginxHeader(authorised) });
  assert.equal(ok.status, 200);
});

Deno.test("register: a TPP whose authorisation was withdrawn is refused", async () => {
  const { status, body, received } = await send(policy(FILE), {
    "x-ssl-client-cert": nginxHeader(withdrawn),
  });
  assert.equal(status, 401);
  assert.equal(body.tppMessages[0].code, "CERTIFICATE_BLOCKED");
  assert.match(body.tppMessages[0].text, /authorisation is withdrawn in the TPP register/);
  assert.equal(received.length, 0);
});

Deno.test("register: an AIS-only TPP initiating a payment is refused with 401 ROLE_INVALID", async () => {
  const { status, body, received } = await send(policy(FILE), {
    "x-ssl-client-cert": nginxHeader(aisOnly),
  });
  assert.equal(status, 401);
  assert.equal(body.tppMessages[0].code, "ROLE_INVALID");
  assert.match(
    body.tppMessages[0].text,
    /not authorised for payment initiation \(PIS\) .* it is for AIS/,
  );
  assert.equal(received.length, 0);
  const reads = await send(
    policy(FILE),
    { "x-ssl-client-cert": nginxHeader(aisOnly), "consent-id": "c-1" },
    ACCOUNTS,
  );
  assert.equal(reads.status, 200);
});

Deno.test("register: a foreign TPP may use only the services passported into the bank's country", async () => {
  const { status, body, received } = await send(policy(FILE), {
    "x-ssl-client-cert": nginxHeader(foreign),
  });
  assert.equal(status, 401);
  assert.equal(body.tppMessages[0].code, "ROLE_INVALID");
  assert.match(body.tppMessages[0].text, /authorised in LT.* not passported to GE/);
  assert.equal(received.length, 0);
  const reads = await send(
    policy(FILE),
    { "x-ssl-client-cert": nginxHeader(foreign), "consent-id": "c-1" },
    ACCOUNTS,
  );
  assert.equal(reads.status, 200);
});

Deno.test("register: a TPP identified only by its signing certificate is checked too", async () => {
  const text = policy(FILE, { jws_signature: { required: true } });
  const input = {
    method: "POST",
    target: PAYMENT_TARGET,
    headers: { ...initiationHeaders(), "x-request-id": crypto.randomUUID() },
    body: PAYMENT_BODY,
  };
  const { status, body, received } = await send(text, await signJws(unlisted, input));
  assert.equal(status, 401);
  assert.equal(body.tppMessages[0].code, "CERTIFICATE_BLOCKED");
  assert.equal(received.length, 0);
});

Deno.test("register: a register URL that cannot be had refuses with 503, never lets the TPP through", async () => {
  await using down = startUpstream(() => new Response("maintenance", { status: 503 }));
  const { status, body, received } = await send(policy({ source: `${down.url}/register.json` }), {
    "x-ssl-client-cert": nginxHeader(authorised),
  });
  assert.equal(status, 503);
  assert.equal(body.tppMessages[0].code, "UPSTREAM_UNAVAILABLE");
  assert.equal(received.length, 0);
  await using served = startUpstream(() =>
    new Response(Deno.readTextFileSync("config/tpp_register.example.json"))
  );
  const ok = await send(policy({ source: `${served.url}/register.json` }), {
    "x-ssl-client-cert": nginxHeader(authorised),
  });
  assert.equal(ok.status, 200);
});
