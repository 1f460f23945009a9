import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { REQUEST_ID } from "../support/requests.ts";

const READ = { "x-request-id": REQUEST_ID, "consent-id": "c-1" };

Deno.test("psuIpPort() rejects a value that is not a port number", async () => {
  await using t = await rig(policy());
  for (const bad of ["0", "65536", "080", "-1", "http", "4 43"]) {
    assertRejected(
      await t.call("/v1/accounts", { headers: { ...READ, "psu-ip-port": bad } }),
      {
        status: 400,
        code: "FORMAT_ERROR",
        path: "PSU-IP-Port",
        text: /port number from 1 to 65535/,
      },
      t.upstream,
    );
  }
});

Deno.test("psuIpPort() accepts ports from 1 to 65535", async () => {
  await using t = await rig(policy());
  for (const [i, port] of ["1", "443", "65535"].entries()) {
    assertForwarded(
      await t.call("/v1/accounts", { headers: { ...READ, "psu-ip-port": port } }),
      t.upstream,
      i + 1,
    );
  }
});

Deno.test("psuIpPort() lets a read without the header through", async () => {
  await using t = await rig(policy());
  assertForwarded(await t.call("/v1/accounts", { headers: READ }), t.upstream);
});

Deno.test("psuIpPort() does not judge operations that do not take the header", async () => {
  await using t = await rig(policy());
  assertForwarded(
    await t.call("/v1/products/en", { headers: { "psu-ip-port": "nonsense" } }),
    t.upstream,
  );
});
