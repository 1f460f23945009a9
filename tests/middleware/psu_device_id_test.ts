import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { REQUEST_ID } from "../support/requests.ts";

const READ = { "x-request-id": REQUEST_ID, "consent-id": "c-1" };

Deno.test("psuDeviceId() rejects a PSU-Device-ID that is not a UUID", async () => {
  await using t = await rig(policy());
  // An empty one is absent (tests/middleware/_headers_test.ts), not malformed.
  for (const bad of ["device-1", "99391c7e-ad88-49ec-a2ad-99ddcb1f772", " x "]) {
    assertRejected(
      await t.call("/v1/accounts", { headers: { ...READ, "psu-device-id": bad } }),
      { status: 400, code: "FORMAT_ERROR", path: "PSU-Device-ID", text: /must be a UUID/ },
      t.upstream,
    );
  }
});

Deno.test("psuDeviceId() accepts a UUID", async () => {
  await using t = await rig(policy());
  assertForwarded(
    await t.call("/v1/accounts", {
      headers: { ...READ, "psu-device-id": "5b1f3c2e-7a41-4d6b-9c0e-000000000001" },
    }),
    t.upstream,
  );
});

Deno.test("psuDeviceId() lets a read without the header through", async () => {
  await using t = await rig(policy());
  assertForwarded(await t.call("/v1/accounts", { headers: READ }), t.upstream);
});

Deno.test("psuDeviceId() does not judge operations that do not take the header", async () => {
  await using t = await rig(policy());
  assertForwarded(
    await t.call("/v1/products/en", { headers: { "psu-device-id": "nonsense" } }),
    t.upstream,
  );
});
