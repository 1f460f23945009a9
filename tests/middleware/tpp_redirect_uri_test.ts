import assert from "node:assert/strict";
import { buildContext } from "../support/sections.ts";
import { operation } from "../../src/psd2/catalogue.ts";
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { consentBody, initiationHeaders } from "../support/requests.ts";
import { tppRedirectUri, uriProblem } from "../../middleware/tpp_redirect_uri.ts";

function consent(extra: Record<string, string>) {
  return { method: "POST", headers: initiationHeaders(extra), body: JSON.stringify(consentBody()) };
}

Deno.test("tppRedirectUri() requires TPP-Redirect-URI when TPP-Redirect-Preferred is true", async () => {
  await using t = await rig(policy());
  assertRejected(await t.call("/v1/consents", consent({ "tpp-redirect-preferred": "true" })), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "TPP-Redirect-URI",
    text: /required when "TPP-Redirect-Preferred" is "true"/,
  }, t.upstream);
  assertForwarded(
    await t.call("/v1/consents", consent({ "tpp-redirect-preferred": "false" })),
    t.upstream,
  );
});

Deno.test("tppRedirectUri() requires TPP-Redirect-URI always when the bank is redirect-only", async () => {
  await using t = await rig(policy({ tpp_redirect_uri: { redirect_only: true } }));
  assertRejected(await t.call("/v1/consents", consent({})), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "TPP-Redirect-URI",
    text: /redirect approach only/,
  }, t.upstream);
  assertForwarded(
    await t.call("/v1/consents", consent({ "tpp-redirect-uri": "https://tpp.example/cb?id=1" })),
    t.upstream,
  );
});

Deno.test("tppRedirectUri() rejects a TPP-Redirect-URI that is not an absolute https URI", async () => {
  await using t = await rig(policy());
  const bad = [
    "http://tpp.example/cb",
    "/cb",
    "tpp.example/cb",
    "https://user:pw@tpp.example/cb",
    "https://tpp.example/a b",
    "javascript:alert(1)",
    "https:///cb",
  ];
  for (const uri of bad) {
    assertRejected(await t.call("/v1/consents", consent({ "tpp-redirect-uri": uri })), {
      status: 400,
      code: "FORMAT_ERROR",
      path: "TPP-Redirect-URI",
      text: /must be an absolute https URI/,
    }, t.upstream);
  }
});

Deno.test("tppRedirectUri() accepts http URIs only when the policy allows them", async () => {
  await using t = await rig(policy({ tpp_redirect_uri: { allow_http: true } }));
  assertForwarded(
    await t.call("/v1/consents", consent({ "tpp-redirect-uri": "http://localhost:3000/cb" })),
    t.upstream,
  );
  assert.equal(uriProblem("http://tpp.example/", false), "must be an absolute https URI");
  assert.equal(uriProblem("ftp://tpp.example/", true), "must be an absolute https or http URI");
});

Deno.test("tppRedirectUri() drops a malformed TPP-Nok-Redirect-URI instead of rejecting", async () => {
  await using t = await rig(policy());
  const outcome = await t.call(
    "/v1/consents",
    consent({ "tpp-nok-redirect-uri": "http://tpp.example/nok" }),
  );
  assertForwarded(outcome, t.upstream);
  assert.equal(t.upstream.received[0].headers.get("tpp-nok-redirect-uri"), null);
  assert.equal(outcome.headers.get("aspsp-notification-support"), null);
});

Deno.test("tppRedirectUri() drops a malformed TPP-Notification-URI and says notifications are off", async () => {
  await using t = await rig(policy());
  const outcome = await t.call("/v1/consents", consent({ "tpp-notification-uri": "notify-me" }));
  assertForwarded(outcome, t.upstream);
  assert.equal(t.upstream.received[0].headers.get("tpp-notification-uri"), null);
  assert.equal(outcome.headers.get("aspsp-notification-support"), "false");
  const findings = t.gateway.log.lines.at(-1)!.findings as Record<string, unknown>[];
  assert.equal(findings[0].path, "TPP-Notification-URI");
  assert.equal(findings[0].dropped, true);
});

Deno.test("tppRedirectUri() rejects malformed ignorable URIs when the policy says reject", async () => {
  await using t = await rig(policy({ tpp_redirect_uri: { ignorable: "reject" } }));
  assertRejected(await t.call("/v1/consents", consent({ "tpp-notification-uri": "notify-me" })), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "TPP-Notification-URI",
  }, t.upstream);
});

Deno.test("tppRedirectUri() forwards good URIs untouched", async () => {
  await using t = await rig(policy());
  const headers = {
    "tpp-redirect-preferred": "true",
    "tpp-redirect-uri": "https://tpp.example/ok?state=abc",
    "tpp-nok-redirect-uri": "https://tpp.example/nok",
    "tpp-notification-uri": "https://notify.tpp.example/hook",
  };
  assertForwarded(await t.call("/v1/consents", consent(headers)), t.upstream);
  for (const [name, value] of Object.entries(headers)) {
    assert.equal(t.upstream.received[0].headers.get(name), value);
  }
});

Deno.test("uriProblem() says what is wrong with a TPP URI", () => {
  const https = "must be an absolute https URI";
  const cases: [string, boolean, string | undefined][] = [
    ["https://tpp.example/cb", false, undefined],
    ["HTTPS://TPP.EXAMPLE/cb", false, undefined],
    ["https://tpp.example", false, undefined],
    ["https://tpp.example?x=1", false, undefined],
    ["http://tpp.example/cb", true, undefined],
    ["Http://tpp.example/cb", true, undefined],
    ["http://tpp.example/cb", false, https],
    ["https://tpp.example/a b", false, `${https} without spaces or non-ASCII characters`],
    [
      "https://tpp.example/\tb",
      true,
      "must be an absolute https or http URI without spaces or non-ASCII characters",
    ],
    ["https://tpp.example/caf\xe9", false, `${https} without spaces or non-ASCII characters`],
    ["https:///tpp.example/cb", false, https],
    ["https:tpp.example/cb", false, https],
    ["https://?x", false, https],
    ["https://#x", false, https],
    ["https://[::1/", false, https],
    ["xhttps://tpp.example/cb", false, https],
    ["https://user@tpp.example/cb", false, `${https} without user information`],
    ["https://:pw@tpp.example/cb", false, `${https} without user information`],
    [
      "http://user:pw@tpp.example/cb",
      true,
      "must be an absolute https or http URI without user information",
    ],
  ];
  for (const [uri, allowHttp, problem] of cases) {
    assert.equal(uriProblem(uri, allowHttp), problem, `${uri} (allow_http: ${allowHttp})`);
  }
});

Deno.test("tppRedirectUri() names the refused header and its problem in the text", async () => {
  await using t = await rig(policy({ tpp_redirect_uri: { ignorable: "reject" } }));
  assertRejected(
    await t.call("/v1/consents", consent({ "tpp-nok-redirect-uri": "https://u@tpp.example/" })),
    {
      status: 400,
      code: "FORMAT_ERROR",
      path: "TPP-Nok-Redirect-URI",
      text:
        /^Header "TPP-Nok-Redirect-URI" must be an absolute https URI without user information$/,
    },
    t.upstream,
  );
});

Deno.test("tppRedirectUri() does not require the URI when TPP-Redirect-Preferred is not true", async () => {
  await using t = await rig(policy());
  for (const [i, flag] of ["false", "FALSE"].entries()) {
    assertForwarded(
      await t.call("/v1/consents", consent({ "tpp-redirect-preferred": flag })),
      t.upstream,
      i + 1,
    );
  }
  assertForwarded(await t.call("/v1/consents", consent({})), t.upstream, 3);
});

Deno.test("tppRedirectUri() in report mode forwards a malformed notification URI and keeps notifications on", async () => {
  await using t = await rig(policy({ tpp_redirect_uri: { mode: "report" } }));
  const outcome = await t.call("/v1/consents", consent({ "tpp-notification-uri": "notify-me" }));
  assertForwarded(outcome, t.upstream);
  assert.equal(t.upstream.received[0].headers.get("tpp-notification-uri"), "notify-me");
  assert.equal(outcome.headers.get("aspsp-notification-support"), null);
  const findings = t.gateway.log.lines.at(-1)!.findings as Record<string, unknown>[];
  assert.deepEqual(findings, [{
    check: "tpp_redirect_uri",
    mode: "report",
    code: "FORMAT_ERROR",
    path: "TPP-Notification-URI",
    dropped: false,
  }]);
});

Deno.test("uriProblem() wants the scheme at the very start", () => {
  // The URL parser would read this as https://x/... .
  assert.equal(
    uriProblem("https:/x/https://tpp.example/cb", false),
    "must be an absolute https URI",
  );
});

Deno.test("tppRedirectUri() judges only the URIs the operation takes", async () => {
  await using t = await rig(policy());
  // Payment cancellation takes the redirect URIs, not TPP-Notification-URI.
  const cancel = await t.call("/v1/payments/domestic/p-1", {
    method: "DELETE",
    headers: { "x-request-id": crypto.randomUUID(), "tpp-notification-uri": "notify-me" },
  });
  assertForwarded(cancel, t.upstream);
  assert.equal(cancel.headers.get("aspsp-notification-support"), null);
  assert.equal(t.gateway.log.lines.at(-1)!.findings, undefined);
  // An operation that takes none of them.
  assertForwarded(
    await t.call("/v1/products/en", { headers: { "tpp-redirect-uri": "not a uri" } }),
    t.upstream,
    2,
  );
});

Deno.test("tppRedirectUri() builds nothing for an operation that takes no TPP URI", () => {
  const build = (id: string) =>
    tppRedirectUri.create(tppRedirectUri.options.parse({}), buildContext(operation(id)));
  assert.equal(build("getAccountList"), undefined);
  assert.notEqual(build("cancelPayment"), undefined);
});
