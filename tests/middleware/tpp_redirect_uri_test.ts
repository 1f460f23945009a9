import assert from "node:assert/strict";
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { consentBody, initiationHeaders } from "../support/requests.ts";
import { uriProblem } from "../../middleware/tpp_redirect_uri.ts";

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
