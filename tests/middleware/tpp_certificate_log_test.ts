/**
 * A refused TPP certificate is logged with whom it names (subject, organizationIdentifier), so
 * that an operator can tell which TPP failed and why; the TPP itself learns only the code.
 */
import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { createCa, issue, nginxHeader } from "../support/pki.ts";
import { buildPolicy } from "../support/policies.ts";

const ca = await createCa();
const rogueCa = await createCa("Rogue CA");

async function refused(certificate: Awaited<ReturnType<typeof issue>> | string) {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: buildPolicy({
      trust: { anchors: [ca.pem] },
      defaults: { tpp_certificate: { form: "nginx", required: true } },
    }),
    upstream: upstream.url,
  });
  const requestId = crypto.randomUUID();
  const response = await gateway.fetch("/v1/accounts", {
    headers: {
      "x-request-id": requestId,
      "consent-id": "c-1",
      "x-ssl-client-cert": typeof certificate === "string" ? certificate : nginxHeader(certificate),
    },
  });
  const body = await response.json();
  assert.equal(response.status, 401);
  assert.equal(upstream.received.length, 0);
  const line = gateway.log.lines.find((l) => l.msg === "TPP certificate refused");
  assert.ok(line, JSON.stringify(gateway.log.lines));
  assert.equal(line.request_id, requestId);
  assert.equal(line.level, "info");
  return { code: body.tppMessages[0].code, line };
}

Deno.test("tppCertificate() logs a certificate without the group's role with its subject and organisation id", async () => {
  const pisOnly = await issue(ca, { roles: ["PSP_PI"], orgId: "PSDGE-NBG-777001" });
  const { code, line } = await refused(pisOnly);
  assert.equal(code, "ROLE_INVALID");
  assert.equal(line.code, "ROLE_INVALID");
  assert.equal(line.organization_id, "PSDGE-NBG-777001");
  assert.match(String(line.subject), /CN=tpp\.example/);
  assert.match(String(line.subject), /PSDGE-NBG-777001/);
  assert.equal(line.op, "getAccountList");
  assert.equal(line.serial, pisOnly.cert.serialNumber.toLowerCase().replace(/^0+(?=.)/, ""));
});

Deno.test("tppCertificate() logs a header that holds no certificate with its code and no names", async () => {
  const { code, line } = await refused(encodeURIComponent("-----BEGIN CERTIFICATE-----\nAAAA\n"));
  assert.equal(code, "CERTIFICATE_INVALID");
  assert.equal(line.code, "CERTIFICATE_INVALID");
  assert.equal(line.subject, undefined);
  assert.equal(line.organization_id, undefined);
  assert.equal(line.serial, undefined);
});

Deno.test("tppCertificate() logs a certificate of an unknown CA with its subject and organisation id", async () => {
  const rogue = await issue(rogueCa, { orgId: "PSDGE-NBG-666666" });
  const { code, line } = await refused(rogue);
  assert.equal(code, "CERTIFICATE_INVALID");
  assert.equal(line.organization_id, "PSDGE-NBG-666666");
  assert.match(String(line.subject), /O=Test TPP/);
});
