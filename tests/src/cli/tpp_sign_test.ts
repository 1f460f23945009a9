import assert from "node:assert/strict";
import { tppCertificate } from "../../../src/cli/tpp_certificate.ts";
import { tppSign } from "../../../src/cli/tpp_sign.ts";
import { startGateway } from "../../support/gateway.ts";
import { buildPolicy } from "../../support/policies.ts";
import { startUpstream } from "../../support/upstream.ts";

const PAYMENT = JSON.stringify({
  debtorAccount: { iban: "GE42SB0000000101904917" },
  instructedAmount: { currency: "GEL", amount: "12.50" },
  creditorAccount: { iban: "GE29NB0000000101904917" },
  creditorName: "Tbilisi Energy",
});

/** `sh -c <line>`; its stdout. */
async function shell(line: string): Promise<string> {
  const output = await new Deno.Command("sh", { args: ["-c", line], stdout: "piped" }).output();
  assert.equal(output.code, 0);
  return new TextDecoder().decode(output.stdout);
}

Deno.test("tpp:sign prints a curl line and header lines that the gateway takes as the TPP's", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const common = ["--org", "PSDGE-NBG-777001", "--roles", "PSP_PI", "--ca-dir", `${dir}/ca`];
    await tppCertificate([...common, "--type", "qwac", "--out", `${dir}/tpp`]);
    await tppCertificate([...common, "--type", "qsealc", "--out", `${dir}/tpp`]);
    await Deno.writeTextFile(`${dir}/payment.json`, PAYMENT);
    await using core = startUpstream(() => Response.json({ paymentId: "p-1" }, { status: 201 }));
    const anchor = await Deno.readTextFile(`${dir}/ca/qtsp-ca.pem`);
    /** A gateway that requires the transport QWAC, Digest and the signature of `check`. */
    const gatewayRequiring = (check: "jws_signature" | "http_signature") =>
      startGateway({
        policy: buildPolicy({
          trust: { anchors: [anchor] },
          defaults: {
            tpp_certificate: { form: "nginx", required: true, types: ["QWAC"], require_type: true },
          },
          groups: {
            pis: {
              digest: { required: true },
              [check]: { required: true, types: ["QSealC"], require_type: true },
            },
          },
        }),
        upstream: core.url,
      });
    const args = [
      ...["--cert", `${dir}/tpp/qsealc.pem`, "--key", `${dir}/tpp/qsealc.key`],
      ...["--method", "POST", "--path", "/v1/payments/domestic", "--body", `${dir}/payment.json`],
      ...["--header", "PSU-IP-Address=192.0.2.17", "--transport", `${dir}/tpp/qwac.pem`],
      // A quote and a space the curl line must carry through the shell, signed as sent.
      ...["--header", "PSU-ID=O'Brien 1"],
    ];

    await using jws = await gatewayRequiring("jws_signature");
    const curl = await tppSign([...args, "--scheme", "jws", "--url", jws.url]);
    assert.match(curl, /^curl -si -X POST /);
    const answer = await shell(curl);
    assert.match(answer, /^HTTP\/1\.1 201/, answer);
    assert.equal(core.received[0].body, PAYMENT, "the body as signed");

    // Header lines for `curl -H @file`, of an HTTP signature; a changed body no longer matches.
    await using http = await gatewayRequiring("http_signature");
    const lines = await tppSign([...args, "--scheme", "http"]);
    assert.match(lines, /^signature: keyId="SN=/m);
    assert.match(lines, /^tpp-signature-certificate: /m);
    await Deno.writeTextFile(`${dir}/headers.txt`, lines + "\n");
    const sent = (body: string) =>
      shell(
        `curl -si -X POST ${http.url}/v1/payments/domestic -H @${dir}/headers.txt --data-binary @${body}`,
      );
    assert.match(await sent(`${dir}/payment.json`), /^HTTP\/1\.1 201/);
    await Deno.writeTextFile(`${dir}/other.json`, PAYMENT.replace("12.50", "99.50"));
    assert.match(await sent(`${dir}/other.json`), /^HTTP\/1\.1 400/);
    assert.equal(core.received.length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tpp:sign names the option it cannot use", async () => {
  await assert.rejects(() => tppSign(["--cert", "a.pem"]), /"--cert" and "--key" are required/);
  await assert.rejects(
    () => tppSign(["--cert", "a", "--key", "b", "--path", "v1/x"]),
    /"--path" must be a path/,
  );
  await assert.rejects(
    () => tppSign(["--cert", "a", "--key", "b", "--path", "/v1/x", "--scheme", "cavage"]),
    /jws or http/,
  );
  await assert.rejects(
    () => tppSign(["--cert", "a", "--key", "b", "--path", "/v1/x", "--header", "PSU-ID"]),
    /Name=value/,
  );
});
