import assert from "node:assert/strict";
import { tppCertificate } from "../../../src/cli/tpp_certificate.ts";
import { UsageError } from "../../../src/cli/tool.ts";
import { parseCertificate } from "../../../src/pki/certificate.ts";
import { registerFile } from "../../../src/pki/register.ts";

Deno.test("tpp:certificate makes the sandbox CA once, issues from it and keeps the register", async () => {
  const dir = await Deno.makeTempDir();
  const caDir = `${dir}/ca`;
  const common = ["--ca-dir", caDir, "--out", `${dir}/tpp`, "--crl-url", "http://ca.test/crl"];
  try {
    const qwac = await tppCertificate([
      ...["--org", "PSDGE-NBG-777001", "--roles", "PSP_PI,PSP_AI", "--type", "qwac"],
      ...["--domain", "api.tpp.example", ...common],
    ]);
    assert.equal(qwac.ca_made, true);
    const caPem = await Deno.readTextFile(`${caDir}/qtsp-ca.pem`);
    const info = await parseCertificate(await Deno.readTextFile(`${dir}/tpp/qwac.pem`));
    assert.deepEqual(info.qcTypes, ["QWAC"]);
    assert.deepEqual(info.roles, ["PSP_PI", "PSP_AI"]);
    assert.equal(info.organizationId, "PSDGE-NBG-777001");
    assert.ok(info.domains.includes("api.tpp.example"));
    assert.equal((await Deno.stat(`${dir}/tpp/qwac.key`)).mode! & 0o077, 0, "owner-only key");

    const qsealc = await tppCertificate([
      ...["--org", "PSDGE-NBG-777001", "--roles", "PSP_AI", "--type", "QSealC", ...common],
    ]);
    assert.equal(qsealc.ca_made, false);
    assert.equal(await Deno.readTextFile(`${caDir}/qtsp-ca.pem`), caPem, "the CA is kept");
    const sealed = await parseCertificate(await Deno.readTextFile(`${dir}/tpp/qsealc.pem`));
    assert.deepEqual(sealed.qcTypes, ["QSealC"]);
    assert.equal(sealed.cert.issuer, info.cert.issuer);

    await tppCertificate([
      ...["--org", "PSDLT-BOL-LB000999", "--roles", "PSP_PI", "--type", "qwac"],
      ...["--passport", "GE", ...common],
    ]);
    const register = registerFile.parse(
      JSON.parse(await Deno.readTextFile(`${caDir}/tpp_register.json`)),
    );
    // The second certificate of 777001 replaced its entry with the roles it names last.
    assert.deepEqual(register.entries.map((e) => [e.id, e.status, e.services, e.passports]), [
      ["PSDGE-NBG-777001", "registered", ["AIS"], undefined],
      ["PSDLT-BOL-LB000999", "authorised", ["PIS"], { GE: ["PIS"] }],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tpp:certificate names the option it cannot use", async () => {
  const cases: [string[], RegExp][] = [
    [["--roles", "PSP_PI", "--type", "qwac"], /"--org" is required/],
    [["--org", "GE-123", "--roles", "PSP_PI", "--type", "qwac"], /must look like PSDGE-NBG-123456/],
    [["--org", "PSDGE-NBG-1", "--roles", "PSP_XX", "--type", "qwac"], /names "PSP_XX"/],
    [["--org", "PSDGE-NBG-1", "--roles", "PSP_PI", "--type", "qesig"], /qwac or qsealc/],
    [["--org", "PSDGE-NBG-1", "--roles", "PSP_PI", "--type", "qwac", "--days", "0"], /--days/],
    [["--org", "PSDGE-NBG-1", "--colour", "red"], /colour/],
  ];
  for (const [args, message] of cases) {
    await assert.rejects(() => tppCertificate(args), (error) => {
      assert.ok(error instanceof UsageError, String(error));
      assert.match(error.message, message);
      return true;
    });
  }
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "tpp:certificate", "--org", "PSDGE-NBG-1", "--type", "qwac"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 2);
  assert.match(
    new TextDecoder().decode(output.stderr),
    /"--roles" must name at least one role\nusage:/,
  );
});
