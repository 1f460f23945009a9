import assert from "node:assert/strict";
import { tppFlags } from "../../middleware/tpp_flags.ts";
import { buildContext } from "../support/sections.ts";
import { operation } from "../../src/psd2/catalogue.ts";
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { consentBody, initiationHeaders, singlePayment } from "../support/requests.ts";

function initiate(extra: Record<string, string>) {
  return {
    method: "POST",
    headers: initiationHeaders(extra),
    body: JSON.stringify(singlePayment()),
  };
}

Deno.test("tppFlags() rejects a TPP-Redirect-Preferred other than true or false", async () => {
  await using t = await rig(policy());
  for (const bad of ["yes", "1", "tru e", "truee"]) {
    assertRejected(
      await t.call("/v1/payments/domestic", initiate({ "tpp-redirect-preferred": bad })),
      {
        status: 400,
        code: "FORMAT_ERROR",
        path: "TPP-Redirect-Preferred",
        text: new RegExp(
          `^Header "TPP-Redirect-Preferred" must be "true" or "false", not "${bad}"$`,
        ),
      },
      t.upstream,
    );
  }
});

Deno.test("tppFlags() does not reject both redirect and decoupled preferred", async () => {
  await using t = await rig(policy());
  const outcome = await t.call(
    "/v1/payments/domestic",
    initiate({
      "tpp-redirect-preferred": "true",
      "tpp-redirect-uri": "https://tpp.example/back",
      "tpp-decoupled-preferred": "true",
    }),
  );
  assertForwarded(outcome, t.upstream);
  assert.equal(t.upstream.received[0].headers.get("tpp-decoupled-preferred"), "true");
});

Deno.test("tppFlags() drops a malformed ignorable flag instead of rejecting", async () => {
  await using t = await rig(policy());
  const flags = {
    "tpp-decoupled-preferred": "TPP-Decoupled-Preferred",
    "tpp-explicit-authorisation-preferred": "TPP-Explicit-Authorisation-Preferred",
    "tpp-rejection-nofunds-preferred": "TPP-Rejection-NoFunds-Preferred",
  };
  for (const [i, [name, display]] of Object.entries(flags).entries()) {
    const outcome = await t.call("/v1/payments/domestic", initiate({ [name]: "maybe" }));
    assertForwarded(outcome, t.upstream, i + 1);
    assert.equal(t.upstream.received[i].headers.get(name), null, `${name} was forwarded`);
    const line = t.gateway.log.lines.at(-1)!;
    assert.deepEqual(line.findings, [{
      check: "tpp_flags",
      mode: "enforce",
      code: "FORMAT_ERROR",
      path: display,
      dropped: true,
    }]);
  }
});

Deno.test("tppFlags() rejects a malformed ignorable flag when the policy says reject", async () => {
  await using t = await rig(policy({ tpp_flags: { ignorable: "reject" } }));
  assertRejected(
    await t.call("/v1/payments/domestic", initiate({ "tpp-decoupled-preferred": "maybe" })),
    { status: 400, code: "FORMAT_ERROR", path: "TPP-Decoupled-Preferred" },
    t.upstream,
  );
});

Deno.test("tppFlags() in report mode forwards a malformed ignorable flag unchanged", async () => {
  await using t = await rig(policy({ tpp_flags: { mode: "report" } }));
  const outcome = await t.call(
    "/v1/payments/domestic",
    initiate({ "tpp-decoupled-preferred": "maybe" }),
  );
  assertForwarded(outcome, t.upstream);
  assert.equal(t.upstream.received[0].headers.get("tpp-decoupled-preferred"), "maybe");
  assert.equal((t.gateway.log.lines.at(-1)!.findings as { mode: string }[])[0].mode, "report");
});

Deno.test("tppFlags() judges only the flags the operation takes", async () => {
  await using t = await rig(policy());
  // Consent creation takes no TPP-Rejection-NoFunds-Preferred: it is not judged (the proxy does
  // not forward it either).
  const outcome = await t.call("/v1/consents", {
    method: "POST",
    headers: initiationHeaders({ "tpp-rejection-nofunds-preferred": "maybe" }),
    body: JSON.stringify(consentBody()),
  });
  assertForwarded(outcome, t.upstream);
  assert.equal(t.gateway.log.lines.at(-1)!.findings, undefined);
  // An operation that takes no flag at all.
  assertForwarded(
    await t.call("/v1/products/en", { headers: { "tpp-redirect-preferred": "maybe" } }),
    t.upstream,
    2,
  );
});

Deno.test("tppFlags() shows a refused value of up to 40 characters whole, a longer one cut", async () => {
  await using t = await rig(policy());
  const call = (value: string) =>
    t.call("/v1/payments/domestic", initiate({ "tpp-redirect-preferred": value }));
  const forty = "y".repeat(40);
  assert.equal(
    (await call(forty)).text,
    `Header "TPP-Redirect-Preferred" must be "true" or "false", not "${forty}"`,
  );
  assert.equal(
    (await call(`${forty}z`)).text,
    `Header "TPP-Redirect-Preferred" must be "true" or "false", not "${forty}..."`,
  );
});

Deno.test("tppFlags() builds nothing for an operation that takes no flag", () => {
  const build = (id: string) =>
    tppFlags.create(tppFlags.options.parse({}), buildContext(operation(id)));
  assert.equal(build("getAccountList"), undefined);
  assert.notEqual(build("createConsent"), undefined);
});
