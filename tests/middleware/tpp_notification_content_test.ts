import assert from "node:assert/strict";
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { consentBody, initiationHeaders } from "../support/requests.ts";
import { notificationContentProblem } from "../../middleware/tpp_notification_content.ts";

const NAME = "tpp-notification-content-preferred";

function consent(value: string) {
  return {
    method: "POST",
    headers: initiationHeaders({ [NAME]: value }),
    body: JSON.stringify(consentBody()),
  };
}

Deno.test("tppNotificationContent() accepts status=X1,...,Xn from SCA, PROCESS, LAST", () => {
  for (const good of ["status=SCA", "status=SCA,PROCESS,LAST", "status=LAST, SCA"]) {
    assert.equal(notificationContentProblem(good), undefined, good);
  }
});

Deno.test("tppNotificationContent() refuses other values, repeats and other shapes", () => {
  assert.match(notificationContentProblem("status=SCA,SCA")!, /must not repeat "SCA"/);
  assert.match(notificationContentProblem("status=SCA,FINAL")!, /"FINAL" is not one of them/);
  assert.match(notificationContentProblem("SCA,PROCESS")!, /must look like status=/);
  assert.match(notificationContentProblem("status=")!, /must look like status=/);
  assert.match(notificationContentProblem("status=sca")!, /"sca" is not one of them/);
  assert.match(notificationContentProblem("status=SCA,,LAST")!, /must look like status=/);
});

Deno.test("tppNotificationContent() drops a malformed header and forwards the request", async () => {
  await using t = await rig(policy());
  assertForwarded(await t.call("/v1/consents", consent("status=SCA,SCA")), t.upstream);
  assert.equal(t.upstream.received[0].headers.get(NAME), null);
  const findings = t.gateway.log.lines.at(-1)!.findings as Record<string, unknown>[];
  assert.deepEqual(findings[0], {
    check: "tpp_notification_content",
    mode: "enforce",
    code: "FORMAT_ERROR",
    path: "TPP-Notification-Content-Preferred",
    dropped: true,
  });
});

Deno.test("tppNotificationContent() forwards a good header and rejects a bad one under reject", async () => {
  {
    await using t = await rig(policy());
    assertForwarded(await t.call("/v1/consents", consent("status=SCA, LAST")), t.upstream);
    assert.equal(t.upstream.received[0].headers.get(NAME), "status=SCA, LAST");
  }
  await using t = await rig(policy({ tpp_notification_content: { ignorable: "reject" } }));
  assertRejected(await t.call("/v1/consents", consent("status=NEVER")), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "TPP-Notification-Content-Preferred",
  }, t.upstream);
});

Deno.test("tppNotificationContent() does not judge operations that do not take the header", async () => {
  await using t = await rig(policy());
  assertForwarded(await t.call("/v1/products/en", { headers: { [NAME]: "never" } }), t.upstream);
  assert.equal(t.gateway.log.lines.at(-1)!.findings, undefined);
});

Deno.test("notificationContentProblem() gives the whole text of each problem", () => {
  const shape = "must look like status=SCA,PROCESS,LAST (values from SCA, PROCESS, LAST)";
  assert.equal(notificationContentProblem("SCA"), shape);
  assert.equal(notificationContentProblem("status=SCA,"), shape);
  assert.equal(
    notificationContentProblem("status=SCA,  LAST"),
    `${shape}; " LAST" is not one of them`,
  );
  assert.equal(
    notificationContentProblem("status=PROCESS,FINAL"),
    `${shape}; "FINAL" is not one of them`,
  );
  assert.equal(notificationContentProblem("status=LAST, LAST"), 'must not repeat "LAST"');
  assert.equal(notificationContentProblem("status=PROCESS"), undefined);
});

Deno.test("notificationContentProblem() wants the status= prefix exactly, in lower case", () => {
  const shape = "must look like status=SCA,PROCESS,LAST (values from SCA, PROCESS, LAST)";
  for (const value of ["Status=SCA", "statuS=SCA,LAST", "values=SCA"]) {
    assert.equal(notificationContentProblem(value), shape, value);
  }
});

Deno.test("tppNotificationContent() lets a request without the header through, and names the header in its text", async () => {
  {
    await using t = await rig(policy());
    const headers = initiationHeaders();
    assertForwarded(
      await t.call("/v1/consents", {
        method: "POST",
        headers,
        body: JSON.stringify(consentBody()),
      }),
      t.upstream,
    );
  }
  await using t = await rig(policy({ tpp_notification_content: { ignorable: "reject" } }));
  assertRejected(await t.call("/v1/consents", consent("status=SCA,SCA")), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "TPP-Notification-Content-Preferred",
    text: /^Header "TPP-Notification-Content-Preferred" must not repeat "SCA"$/,
  }, t.upstream);
});
