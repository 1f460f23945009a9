/**
 * Only what the gateway verified reaches the core: with a verified certificate in the policy's
 * header, the other certificate headers a client adds (naming another TPP) and the X-Forwarded-*
 * headers of a peer that is not a TLS terminator never reach it.
 */
import assert from "node:assert/strict";
import { startFaultyUpstream } from "../support/faulty_upstream.ts";
import { startGateway } from "../support/gateway.ts";
import { createCa, issue, nginxHeader } from "../support/pki.ts";
import { buildPolicy } from "../support/policies.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";

/** Certificate headers of other terminators, each naming another TPP. */
function otherCertificateHeaders(other: { base64: string }, otherNginx: string) {
  return {
    "client-cert": `:${other.base64}:`,
    "client-cert-chain": `:${other.base64}:`,
    "x-forwarded-client-cert": `Hash=abc;Cert="${otherNginx}"`,
    "ssl-client-cert": otherNginx,
    "x-client-cert": otherNginx,
    "x-arr-clientcert": other.base64,
    "x-amzn-mtls-clientcert": otherNginx,
  };
}

Deno.test("a verified certificate reaches the core in the policy's header only, never beside another TPP's", async () => {
  const ca = await createCa();
  const tpp = await issue(ca);
  const other = await issue(ca, { orgId: "PSDGE-NBG-666666" });
  const others = otherCertificateHeaders(other, nginxHeader(other));
  await using core = startFaultyUpstream();
  await using gateway = await startGateway({
    policy: buildPolicy({
      trust: { anchors: [ca.pem] },
      defaults: {
        tpp_certificate: { mode: "enforce", form: "nginx" },
        // Even a policy that forwards them by name does not let them pass beside the verified one.
        proxy: { forward_headers: ["client-cert", "x-forwarded-client-cert"] },
      },
    }),
    upstream: core.url,
  });
  const response = await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers: initiationHeaders({
      "x-request-id": crypto.randomUUID(),
      "x-ssl-client-cert": nginxHeader(tpp),
      ...others,
    }),
    body: JSON.stringify(singlePayment()),
  });
  await response.body?.cancel();
  assert.equal(response.status, 201);
  const received = core.requests[0].headers;
  assert.equal(received.get("x-ssl-client-cert"), nginxHeader(tpp));
  for (const name of Object.keys(others)) {
    assert.equal(received.get(name), null, `${name} reached the core`);
  }
});

const FORWARDED = {
  "x-forwarded-proto": "https",
  "x-forwarded-host": "bank.example",
  "x-forwarded-port": "443",
};

/** The X-Forwarded-* the core receives when the test's peer (127.0.0.1) sends them. */
async function forwardedToCore(terminators?: string[]) {
  await using core = startFaultyUpstream();
  await using gateway = await startGateway({
    policy: buildPolicy({
      ...(terminators && { trust: { terminators } }),
      defaults: { proxy: { forward_headers: ["x-forwarded-host", "x-forwarded-port"] } },
    }),
    upstream: core.url,
  });
  const response = await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers: initiationHeaders({ "x-request-id": crypto.randomUUID(), ...FORWARDED }),
    body: JSON.stringify(singlePayment()),
  });
  await response.body?.cancel();
  assert.equal(response.status, 201);
  const received = core.requests[0].headers;
  return Object.fromEntries(Object.keys(FORWARDED).map((name) => [name, received.get(name)]));
}

Deno.test("X-Forwarded-Proto, -Host and -Port of a peer that is no terminator never reach the core", async () => {
  // The test's own address is no terminator here: the scheme is the gateway's own.
  assert.deepEqual(await forwardedToCore(["10.9.9.9"]), {
    "x-forwarded-proto": "http",
    "x-forwarded-host": null,
    "x-forwarded-port": null,
  });
});

Deno.test("X-Forwarded-Proto, -Host and -Port of a TLS terminator reach the core when the policy forwards them", async () => {
  // No terminators listed: loopback peers are the terminators.
  assert.deepEqual(await forwardedToCore(), FORWARDED);
});
