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
