import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { createCa, issue, nginxHeader } from "../support/pki.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";
import { consentBody, initiationHeaders } from "../support/requests.ts";
import { buildContext } from "../support/sections.ts";
import { tppUris } from "../../middleware/tpp_uris.ts";
import { operation } from "../../src/psd2/catalogue.ts";

const ca = await createCa();
const tpp = await issue(ca, { domains: ["tpp.example", "*.api.tpp.example"] });

function policy(tppUris: LevelInput["tpp_uris"] = {}) {
  return buildPolicy({
    trust: { anchors: [ca.pem] },
    defaults: { tpp_certificate: { form: "nginx" }, tpp_uris: { redirect: "warn", ...tppUris } },
  });
}

async function consent(headers: Record<string, string>, options: { policy?: PolicyInput } = {}) {
  await using upstream = startUpstream(() => Response.json({ consentId: "c-1" }, { status: 201 }));
  await using gateway = await startGateway({
    policy: options.policy ?? policy(),
    upstream: upstream.url,
  });
  const response = await gateway.fetch("/v1/consents", {
    method: "POST",
    // A consent creation that passes every request-hardening rule, so that tpp_uris decides.
    headers: initiationHeaders({
      "x-request-id": crypto.randomUUID(),
      "x-ssl-client-cert": nginxHeader(tpp),
      ...headers,
    }),
    body: JSON.stringify(consentBody()),
  });
  const body = await response.json();
  return { response, body, received: upstream.received, log: gateway.log.lines };
}

Deno.test("tppUris() forwards a notification URI inside the certificate's domains", async () => {
  for (const uri of ["https://tpp.example/notify", "https://hooks.api.tpp.example/n"]) {
    const { response, received } = await consent({ "tpp-notification-uri": uri });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("aspsp-notification-support"), null);
    assert.equal(received[0].headers.get("tpp-notification-uri"), uri);
  }
});

Deno.test("tppUris() strips a notification URI outside the domains and says ASPSP-Notification-Support: false", async () => {
  for (
    const uri of [
      "https://evil.example/n",
      "https://a.b.api.tpp.example/n",
      "https://api.tpp.example.evil/n",
    ]
  ) {
    const { response, received } = await consent({ "tpp-notification-uri": uri });
    assert.equal(response.status, 201, uri);
    assert.equal(response.headers.get("aspsp-notification-support"), "false", uri);
    assert.equal(received.length, 1);
    assert.equal(received[0].headers.get("tpp-notification-uri"), null, uri);
  }
});

Deno.test("tppUris() rejects a redirect URI outside the domains when the policy says reject", async () => {
  const { response, body, received } = await consent(
    { "tpp-redirect-uri": "https://phish.example/cb" },
    { policy: policy({ redirect: "reject" }) },
  );
  assert.equal(response.status, 400);
  assert.equal(body.tppMessages[0].code, "FORMAT_ERROR");
  assert.equal(body.tppMessages[0].path, "TPP-Redirect-URI");
  assert.match(
    body.tppMessages[0].text,
    /domains of the TPP's certificate \(tpp\.example, \*\.api\.tpp\.example\)/,
  );
  assert.equal(received.length, 0);
  const nok = await consent({ "tpp-nok-redirect-uri": "https://phish.example/nok" }, {
    policy: policy({ redirect: "reject" }),
  });
  assert.equal(nok.body.tppMessages[0].path, "TPP-Nok-Redirect-URI");
});

Deno.test("tppUris() forwards a redirect URI outside the domains with a finding when the policy says warn", async () => {
  const { response, received, log } = await consent({
    "tpp-redirect-uri": "https://phish.example/cb",
  });
  assert.equal(response.status, 201);
  assert.equal(received.length, 1);
  const line = log.find((l) => l.op === "createConsent") as {
    findings?: { check: string; code: string }[];
  };
  assert.deepEqual(line.findings?.map((f) => [f.check, f.code]), [["tpp_uris", "FORMAT_ERROR"]]);
  const inside = await consent({ "tpp-redirect-uri": "https://tpp.example/cb" }, {
    policy: policy({ redirect: "reject" }),
  });
  assert.equal(inside.response.status, 201);
});

Deno.test("tppUris() judges nothing without a verified transport certificate", async () => {
  const { response, received } = await consent({
    "x-ssl-client-cert": "",
    "tpp-notification-uri": "https://evil.example/n",
  }, { policy: policy({ redirect: "reject" }) });
  assert.equal(response.status, 201);
  assert.equal(received[0].headers.get("tpp-notification-uri"), "https://evil.example/n");
});

Deno.test("tppUris() in report mode forwards the notification URI unchanged and logs the finding", async () => {
  const reportPolicy = policy({ mode: "report" });
  const { response, received, log } = await consent({
    "tpp-notification-uri": "https://evil.example/n",
    "tpp-redirect-uri": "https://evil.example/r",
  }, { policy: reportPolicy });
  assert.equal(response.status, 201);
  assert.equal(response.headers.get("aspsp-notification-support"), null);
  assert.equal(received[0].headers.get("tpp-notification-uri"), "https://evil.example/n");
  const findings = log.find((l) => l.op === "createConsent")?.findings as {
    check: string;
    mode: string;
    path: string;
    dropped?: boolean;
  }[];
  assert.deepEqual(
    findings.filter((f) => f.check === "tpp_uris").map((f) => [f.path, f.mode, f.dropped]),
    [["TPP-Redirect-URI", "report", undefined], ["TPP-Notification-URI", "report", false]],
  );
});

Deno.test("tppUris() in enforce mode logs the stripped notification URI as dropped", async () => {
  const { received, log } = await consent({ "tpp-notification-uri": "https://evil.example/n" });
  assert.equal(received[0].headers.get("tpp-notification-uri"), null);
  const findings = log.find((l) => l.op === "createConsent")?.findings as {
    check: string;
    mode: string;
    dropped?: boolean;
  }[];
  assert.deepEqual(
    findings.filter((f) => f.check === "tpp_uris").map((f) => [f.mode, f.dropped]),
    [["enforce", true]],
  );
});

Deno.test("tppUris() forwards a notification URI outside the domains when the policy says forward", async () => {
  const forward = policy({ notification: "forward" });
  const { response, received, log } = await consent(
    { "tpp-notification-uri": "https://evil.example/n" },
    { policy: forward },
  );
  assert.equal(response.status, 201);
  assert.equal(response.headers.get("aspsp-notification-support"), null);
  assert.equal(received[0].headers.get("tpp-notification-uri"), "https://evil.example/n");
  const line = log.find((l) => l.op === "createConsent");
  assert.equal(line?.findings, undefined);
});

Deno.test("tppUris() names the refused redirect URI and the certificate's domains in its text", async () => {
  const { body } = await consent(
    { "tpp-nok-redirect-uri": "https://phish.example/nok" },
    { policy: policy({ redirect: "reject" }) },
  );
  assert.equal(
    body.tppMessages[0].text,
    `Header "TPP-Nok-Redirect-URI" must point into the domains of the TPP's certificate (tpp.example, *.api.tpp.example)`,
  );
});

Deno.test("tppUris() says none when the certificate names no domain", async () => {
  const bare = await issue(ca, { domains: [], name: "TPP Without Domains" });
  const { response, body, received } = await consent(
    { "x-ssl-client-cert": nginxHeader(bare), "tpp-redirect-uri": "https://tpp.example/cb" },
    { policy: policy({ redirect: "reject" }) },
  );
  assert.equal(response.status, 400);
  assert.equal(
    body.tppMessages[0].text,
    `Header "TPP-Redirect-URI" must point into the domains of the TPP's certificate (none)`,
  );
  assert.equal(received.length, 0);
});

Deno.test("tppUris() with notification: forward still judges the redirect URIs", async () => {
  const forward = policy({ redirect: "reject", notification: "forward" });
  const { response, body, received } = await consent(
    { "tpp-redirect-uri": "https://phish.example/cb" },
    { policy: forward },
  );
  assert.equal(response.status, 400);
  assert.equal(body.tppMessages[0].path, "TPP-Redirect-URI");
  assert.equal(received.length, 0);
});

Deno.test("tppUris() builds nothing for an operation without TPP URIs, or with only a forwarded notification URI", () => {
  const build = (headers: string[], notification = "strip") =>
    tppUris.create(
      tppUris.options.parse({ notification }),
      buildContext({ ...operation("createConsent"), headers }),
    );
  assert.equal(build([]), undefined);
  assert.equal(build(["tpp-notification-uri"], "forward"), undefined);
  assert.notEqual(build(["tpp-notification-uri"]), undefined);
  assert.notEqual(build(["tpp-nok-redirect-uri"], "forward"), undefined);
});
