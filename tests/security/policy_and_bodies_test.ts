/**
 * Security: attacks through the policy file, the XML bodies and the paths a TPP sends (issue 18,
 * item 19). A route that climbs out of the core's prefix or shadows another operation is refused
 * when the policy loads; XML that asks the core's parser to include or fetch another document is
 * refused before it reaches the core; an IBAN in a path no operation has is masked in the log.
 */
import assert from "node:assert/strict";
import { PIPELINE } from "../../middleware/mod.ts";
import { parsePolicy, PolicyError } from "../../src/policy/load.ts";
import { startGateway } from "../support/gateway.ts";
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { IBAN, initiationHeaders, PAIN_001 } from "../support/requests.ts";
import { startUpstream } from "../support/upstream.ts";
import { type PolicyInput, policyYaml } from "../support/policies.ts";

/** The problems of a policy that must not load; a recording core shows nothing was served. */
async function refused(text: PolicyInput): Promise<string[]> {
  await using core = startUpstream();
  const problems = await startGateway({ policy: text, upstream: core.url }).then(
    async (gateway) => {
      await gateway.close();
      return assert.fail("the policy loaded");
    },
    (error) => {
      assert.ok(error instanceof PolicyError, String(error));
      return error.problems;
    },
  );
  assert.equal(core.received.length, 0, "nothing reached the core");
  return problems;
}

Deno.test("policy: an upstream_path with a dot segment, in any spelling, is refused at load", async () => {
  for (
    const path of [
      "/psd2/v1/../internal/accounts/{account-id}/balances",
      "/psd2/v1/%2e%2e/internal/accounts/{account-id}/balances",
      "/psd2/v1/.%2E/internal/accounts/{account-id}/balances",
      "/psd2/v1%2F..%2Finternal/accounts/{account-id}/balances",
      "/psd2/v1/./accounts/{account-id}/balances",
    ]
  ) {
    const problems = await refused(
      policy({}, { operations: { getBalances: { route: { upstream_path: path } } } }),
    );
    assert.deepEqual(problems, [
      `operations.getBalances.route.upstream_path: must not contain a . or .. segment (also percent-encoded), got "${path}"`,
    ]);
  }
});

Deno.test("policy: two operations on one method and public path are refused at load", async () => {
  // getTransactionList moved onto getBalances' path: one of the two would never be served.
  const problems = await refused(
    policy({}, {
      operations: { getTransactionList: { route: { path: "/v1/accounts/{account-id}/balances" } } },
    }),
  );
  assert.deepEqual(problems, [
    'operations.getTransactionList.route.path: GET "/v1/accounts/{account-id}/balances" is already the route of getBalances',
  ]);
  // Parameter names aside, the same route is the same route: /v1/accounts/{consentId} would
  // shadow readAccountDetails' /v1/accounts/{account-id}.
  assert.throws(
    () =>
      parsePolicy(
        "p.yaml",
        policyYaml(policy({}, {
          operations: { getConsentInformation: { route: { path: "/v1/accounts/{consentId}" } } },
        })),
        { ...PIPELINE, env: () => "http://127.0.0.1:9" },
      ),
    (error: unknown) =>
      error instanceof PolicyError &&
      error.problems.includes(
        'operations.getConsentInformation.route.path: GET "/v1/accounts/{consentId}" is already the route of readAccountDetails',
      ),
  );
});

const PAIN = "/v1/payments/pain.001-sepa-credit-transfers";
const PAIN_POLICY = policy({
  path_params: { offered_products: ["pain.001-sepa-credit-transfers"] },
});

function postXml(body: string): RequestInit {
  return {
    method: "POST",
    headers: initiationHeaders({ "content-type": "application/xml" }),
    body,
  };
}

/** PAIN_001 with `attributes` on its root element and `inside` as its first child. */
function pain(attributes: string, inside = ""): string {
  return PAIN_001.replace(
    '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.03">',
    `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.03" ${attributes}>${inside}`,
  );
}

Deno.test("xml: a pain.001 body with XInclude is refused and never reaches the core", async () => {
  await using t = await rig(PAIN_POLICY);
  const include = '<xi:include href="file:///etc/passwd" parse="text"/>';
  for (
    const body of [
      pain('xmlns:xi="http://www.w3.org/2001/XInclude"', include),
      pain('xmlns:x="http://www.w3.org/2003/XInclude"', include.replaceAll("xi:", "x:")),
      pain('xmlns:xi="http://www.w3.org/2001/&#88;Include"', include),
      pain("", '<include xmlns="http://www.w3.org/2001/XInclude" href="http://169.254.169.254/"/>'),
      pain("", include),
    ]
  ) {
    assertRejected(
      await t.call(PAIN, postXml(body)),
      { status: 400, code: "FORMAT_ERROR", path: "body", text: /must not use XInclude/ },
      t.upstream,
    );
  }
  assertForwarded(await t.call(PAIN, postXml(PAIN_001)), t.upstream);
});

Deno.test("xml: a pain.001 body with a schema location is refused unless the policy allows it", async () => {
  const xsi = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"';
  const bodies = [
    pain(
      `${xsi} xsi:schemaLocation="urn:iso:std:iso:20022:tech:xsd:pain.001.001.03 http://attacker.example/pain.xsd"`,
    ),
    pain(`${xsi} xsi:noNamespaceSchemaLocation="http://169.254.169.254/latest/meta-data"`),
    pain(
      `xmlns:s="http://www.w3.org/2001/XMLSchema-instance" s:schemaLocation="urn:x file:///etc/passwd"`,
    ),
  ];
  {
    await using t = await rig(PAIN_POLICY);
    for (const body of bodies) {
      assertRejected(
        await t.call(PAIN, postXml(body)),
        { status: 400, code: "FORMAT_ERROR", path: "body", text: /schema location attribute/ },
        t.upstream,
      );
    }
  }
  await using allowed = await rig(
    policy({
      path_params: { offered_products: ["pain.001-sepa-credit-transfers"] },
      body_schema: { allow_xml_schema_location: true },
    }),
  );
  for (const [i, body] of bodies.entries()) {
    assertForwarded(await allowed.call(PAIN, postXml(body)), allowed.upstream, i + 1);
  }
});

Deno.test("access log: an IBAN in the path of a 404 or a 405 is masked, wherever it stands", async () => {
  await using t = await rig(policy());
  const iban = IBAN.debtor;
  const attempts: [string, RequestInit, number][] = [
    [`/v1/accounts/${iban}/balances/x`, {}, 404],
    // It fits /v1/{payment-service}/{payment-product}/{paymentId}, with a service that is none.
    [`/v1/accounts/${iban}/balancez`, {}, 400],
    [`/v1/accounts/${iban}/balances`, { method: "DELETE" }, 405],
    [`/v1/accounts/${iban}/balances`, { method: "HEAD" }, 405],
    [`/v2/${iban}`, {}, 404],
    [`/v1/accounts/${iban.toLowerCase()}`, { method: "POST", body: "{}" }, 405],
  ];
  for (const [path, init, status] of attempts) {
    const answer = await t.gateway.fetch(path, {
      ...init,
      headers: { "x-request-id": crypto.randomUUID() },
    });
    await answer.body?.cancel();
    assert.equal(answer.status, status, path);
  }
  assert.equal(t.upstream.received.length, 0, "nothing reached the core");
  const logged = t.gateway.log.lines.filter((line) => line.status !== undefined);
  assert.equal(logged.length, attempts.length);
  const text = JSON.stringify(t.gateway.log.lines);
  assert.ok(!text.includes(iban) && !text.includes(iban.toLowerCase()), text);
  assert.deepEqual(logged.map((line) => line.path), [
    `/v1/accounts/${iban.slice(0, 2)}***${iban.slice(-2)}/balances/***`,
    `/v1/accounts/${iban.slice(0, 2)}***${iban.slice(-2)}/ba***ez`,
    `/v1/accounts/${iban.slice(0, 2)}***${iban.slice(-2)}/balances`,
    `/v1/accounts/${iban.slice(0, 2)}***${iban.slice(-2)}/balances`,
    `/***/${iban.slice(0, 2)}***${iban.slice(-2)}`,
    `/v1/accounts/${iban.slice(0, 2).toLowerCase()}***${iban.slice(-2)}`,
  ]);
});
