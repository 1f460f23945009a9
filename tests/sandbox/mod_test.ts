import assert from "node:assert/strict";
import fc from "fast-check";
import { createSandbox, LEGACY_HEADERS } from "../../src/sandbox/mod.ts";
import { assertError, send } from "./helpers.ts";

Deno.test("createSandbox() puts the legacy Server and X-Powered-By headers on every response", async () => {
  const app = createSandbox();
  const responses = [
    await send(app, "/v1/products/en"),
    await send(app, "/nowhere"),
    await send(app, "/v1/products/en?page=x"),
    await send(app, "/psd2/v1/payments/domestic", { method: "POST", body: "{" }),
  ];
  for (const res of responses) {
    assert.equal(res.headers.get("Server"), LEGACY_HEADERS.Server);
    assert.equal(res.headers.get("X-Powered-By"), LEGACY_HEADERS["X-Powered-By"]);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  }
});

Deno.test("createSandbox() answers unknown paths and methods with 404 RESOURCE_UNKNOWN", async () => {
  const app = createSandbox();
  for (
    const [method, path] of [["GET", "/"], ["GET", "/v1/payments/domestic"], [
      "PATCH",
      "/psd2/v1/consents",
    ], ["GET", "/psd2/v2/accounts"]]
  ) {
    await assertError(send(app, path, { method }), { status: 404, code: "RESOURCE_UNKNOWN" });
  }
});

Deno.test("createSandbox() keeps state per instance", async () => {
  const a = createSandbox();
  const b = createSandbox();
  const created = await send(a, "/psd2/v1/payments/domestic", { method: "POST", body: { x: 1 } });
  const href = (await created.json())._links.self.href;
  assert.equal((await send(a, href)).status, 200);
  assert.equal((await send(b, href)).status, 404);
});

Deno.test("createSandbox() never answers 500 to odd bodies, headers or queries", async () => {
  const app = createSandbox();
  const paths = [
    "/psd2/v1/payments/domestic",
    "/psd2/v1/consents",
    "/api/v1/checkout/orders",
  ];
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...paths),
      fc.oneof(
        fc.string(),
        fc.json(),
        fc.jsonValue().map((v) =>
          JSON.stringify({ access: v, validUntil: "2025-01-01", items: v, purchase_units: v })
        ),
      ),
      fc.string(),
      async (path, body, header) => {
        const res = await send(app, path, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            Authorization: `Bearer ${encodeURIComponent(header) || "x"}`,
            "PSU-ID": encodeURIComponent(header),
            "TPP-Decoupled-Preferred": encodeURIComponent(header),
          },
          body,
        });
        assert.ok(res.status < 500, `${path} ${body} -> ${res.status}`);
        if (res.status === 201 && path === "/api/v1/checkout/orders") {
          const { links } = await res.json();
          const read = await send(app, new URL(links[0].href).pathname, {
            headers: { Authorization: "Bearer x" },
          });
          assert.equal(read.status, 200);
        }
      },
    ),
    { numRuns: 200 },
  );
  await fc.assert(
    fc.asyncProperty(fc.string(), fc.string(), async (a, b) => {
      const q = `amount=${encodeURIComponent(a)}&client_id=${encodeURIComponent(b)}&page=${
        encodeURIComponent(a)
      }`;
      for (
        const path of ["/v1/services/installment/calculate", "/v1/products/en", "/psd2/v1/accounts"]
      ) {
        const res = await send(app, `${path}?${q}`, {
          headers: { "Consent-ID": encodeURIComponent(b) || "x" },
        });
        assert.ok(res.status < 500, `${path}?${q} -> ${res.status}`);
      }
    }),
    { numRuns: 200 },
  );
});
