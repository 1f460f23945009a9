import assert from "node:assert/strict";
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { REQUEST_ID } from "../support/requests.ts";
import { buildContext } from "../support/sections.ts";
import { requestId } from "../../middleware/request_id.ts";
import { operation } from "../../src/psd2/catalogue.ts";

const READ = { "consent-id": "consent-1" };

Deno.test("requestId() rejects an account read without X-Request-ID", async () => {
  await using t = await rig(policy());
  const outcome = await t.call("/v1/accounts", { headers: READ });
  assertRejected(outcome, {
    status: 400,
    code: "FORMAT_ERROR",
    path: "X-Request-ID",
    text: /^Header "X-Request-ID" is required/,
  }, t.upstream);
});

Deno.test("requestId() rejects an X-Request-ID that is not a UUID", async () => {
  await using t = await rig(policy());
  for (
    const bad of ["12345", `${REQUEST_ID}0`, REQUEST_ID.replaceAll("-", ""), `{${REQUEST_ID}}`]
  ) {
    const outcome = await t.call("/v1/accounts", { headers: { ...READ, "x-request-id": bad } });
    assertRejected(outcome, {
      status: 400,
      code: "FORMAT_ERROR",
      path: "X-Request-ID",
      text: /must be a UUID/,
    }, t.upstream);
  }
});

Deno.test("requestId() shows the refused value in its text, cut after 40 characters", async () => {
  await using t = await rig(policy());
  const example = "99391c7e-ad88-49ec-a2ad-99ddcb1f7721";
  const forty = "x".repeat(40);
  for (
    const [sent, shown] of [
      ["12345", "12345"],
      [forty, forty],
      [`${forty}y`, `${forty}...`],
    ]
  ) {
    const outcome = await t.call("/v1/accounts", { headers: { ...READ, "x-request-id": sent } });
    assertRejected(outcome, {
      status: 400,
      code: "FORMAT_ERROR",
      path: "X-Request-ID",
      text: new RegExp(
        `^Header "X-Request-ID" must be a UUID like ${example}, not "${
          shown.replace(/\./g, "\\.")
        }"$`,
      ),
    }, t.upstream);
  }
});

Deno.test("requestId() accepts a UUID in either case", async () => {
  await using t = await rig(policy());
  assertForwarded(
    await t.call("/v1/accounts", { headers: { ...READ, "x-request-id": REQUEST_ID } }),
    t.upstream,
  );
  assertForwarded(
    await t.call("/v1/accounts", {
      headers: { ...READ, "x-request-id": REQUEST_ID.toUpperCase() },
    }),
    t.upstream,
    2,
  );
});

Deno.test("requestId() does not require the id where the catalogue does not, but checks it", async () => {
  await using t = await rig(policy());
  assertForwarded(await t.call("/v1/products/en"), t.upstream);
  const outcome = await t.call("/v1/products/en", { headers: { "x-request-id": "x" } });
  assertRejected(
    outcome,
    { status: 400, code: "FORMAT_ERROR", path: "X-Request-ID" },
    t.upstream,
    1,
  );
});

Deno.test("requestId() in report mode forwards and logs the finding", async () => {
  await using t = await rig(policy({ request_id: { mode: "report" } }));
  assertForwarded(await t.call("/v1/accounts", { headers: READ }), t.upstream);
  const line = t.gateway.log.lines.find((l) => l.findings);
  assert.deepEqual(line?.findings, [{
    check: "request_id",
    mode: "report",
    code: "FORMAT_ERROR",
    path: "X-Request-ID",
    dropped: undefined,
  }]);
});

Deno.test("requestId() builds nothing for an operation that neither takes nor requires X-Request-ID", () => {
  const build = (headers: string[], required: string[]) =>
    requestId.create(
      requestId.options.parse({}),
      buildContext({ ...operation("getAccountList"), headers, required }),
    );
  assert.equal(build([], []), undefined);
  assert.notEqual(build(["x-request-id"], []), undefined);
  assert.notEqual(build([], ["x-request-id"]), undefined);
});
