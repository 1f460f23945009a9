import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { REQUEST_ID } from "../support/requests.ts";

const READ = { "x-request-id": REQUEST_ID, "consent-id": "c-1" };

Deno.test("psuHttpMethod() rejects a method outside GET, POST, PUT, PATCH, DELETE", async () => {
  await using t = await rig(policy());
  for (const bad of ["HEAD", "get", "TRACE", "POST,GET"]) {
    assertRejected(
      await t.call("/v1/accounts", { headers: { ...READ, "psu-http-method": bad } }),
      { status: 400, code: "FORMAT_ERROR", path: "PSU-Http-Method", text: /must be one of GET/ },
      t.upstream,
    );
  }
});

Deno.test("psuHttpMethod() accepts each of the five methods", async () => {
  await using t = await rig(policy());
  for (const [i, method] of ["GET", "POST", "PUT", "PATCH", "DELETE"].entries()) {
    assertForwarded(
      await t.call("/v1/accounts", { headers: { ...READ, "psu-http-method": method } }),
      t.upstream,
      i + 1,
    );
  }
});

Deno.test("psuHttpMethod() lets a read without the header through", async () => {
  await using t = await rig(policy());
  assertForwarded(await t.call("/v1/accounts", { headers: READ }), t.upstream);
});

Deno.test("psuHttpMethod() does not judge operations that do not take the header", async () => {
  await using t = await rig(policy());
  assertForwarded(
    await t.call("/v1/products/en", { headers: { "psu-http-method": "nonsense" } }),
    t.upstream,
  );
});
