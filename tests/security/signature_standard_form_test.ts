/**
 * A TPP that signs exactly as the Berlin Group standard's example does (issue 36 item 1): an HTTP
 * signature over `Digest X-Request-ID PSU-ID TPP-Redirect-URI Date` with `keyId="SN=<hex>,CA=<issuer
 * DN>"`, and a JWS whose `sigD.pars` lists the same headers without `(request-target)`. Both pass
 * under the default coverage; a bank that covers more (`(request-target)`, a time) refuses them by
 * its policy; and what the standard's minimum already binds holds: the body by Digest, one use of
 * an X-Request-ID, the certificate the keyId names.
 */
import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { createCa, issue } from "../support/pki.ts";
import { buildPolicy, type LevelInput } from "../support/policies.ts";
import { initiationHeaders } from "../support/requests.ts";
import {
  PAYMENT_BODY,
  PAYMENT_TARGET,
  signHttpSignature,
  type SignInput,
  signJws,
} from "../support/signing.ts";

/** The guidelines' example CA ("CN=D-TRUST CA 2-1 2015,O=D-Trust GmbH,C=DE"), as a test CA. */
const ca = await createCa("D-TRUST CA 2-1 2015");
/** Serial 0x9FA1, the guidelines' example keyId. */
const tpp = await issue(ca, { serial: "9fa1" });

/** The standard's example list, in the case the example writes it. */
const EXAMPLE_HEADERS = ["Digest", "X-Request-ID", "PSU-ID", "TPP-Redirect-URI", "Date"];

/** The keyId as the guidelines write it: hex serial, the DN with `%20` for its spaces. */
const EXAMPLE_KEY_ID = "SN=9FA1,CA=CN=D-TRUST%20CA%202-1%202015,O=Test%20QTSP,C=GE";

function payment(): SignInput {
  return {
    method: "POST",
    target: PAYMENT_TARGET,
    headers: initiationHeaders({
      "x-request-id": crypto.randomUUID(),
      "psu-id": "PSU-1234",
      "tpp-redirect-uri": "https://tpp.example/ok",
    }),
    body: PAYMENT_BODY,
  };
}

/** The standard's example signature of a fresh payment initiation. */
function exampleSignature(options: { headers?: string[]; keyId?: string } = {}) {
  return signHttpSignature(tpp, payment(), {
    headers: options.headers ?? EXAMPLE_HEADERS,
    keyId: options.keyId ?? EXAMPLE_KEY_ID,
  });
}

/** A policy trusting the CA and requiring a signature, with these options over the defaults. */
function policy(check: "http_signature" | "jws_signature", options: LevelInput[typeof check] = {}) {
  return buildPolicy({
    trust: { anchors: [ca.pem] },
    defaults: { [check]: { required: true, ...options } },
  });
}

/** Sends the requests in turn through one gateway; their statuses, texts and the core's count. */
async function send(
  requests: { headers: Record<string, string>; path?: string }[],
  gatewayPolicy: ReturnType<typeof policy>,
) {
  await using upstream = startUpstream(() => Response.json({ paymentId: "p-1" }, { status: 201 }));
  await using gateway = await startGateway({ policy: gatewayPolicy, upstream: upstream.url });
  const answers = [];
  for (const { headers, path } of requests) {
    const response = await gateway.fetch(path ?? PAYMENT_TARGET, {
      method: "POST",
      headers,
      body: PAYMENT_BODY,
    });
    const body = await response.json();
    answers.push({ status: response.status, text: body.tppMessages?.[0]?.text as string });
  }
  return { answers, reached: upstream.received.length };
}

const COVER_TARGET = { cover: ["(request-target)", "digest", "x-request-id"] };

Deno.test("http signature: the standard's example form passes by default", async () => {
  const signed = await exampleSignature();
  assert.match(signed.signature, /headers="Digest X-Request-ID PSU-ID TPP-Redirect-URI Date"/);
  assert.match(signed.signature, /keyId="SN=9FA1,CA=CN=D-TRUST%20CA%202-1%202015,/);
  const { answers, reached } = await send([{ headers: signed }], policy("http_signature"));
  assert.deepEqual(answers, [{ status: 201, text: undefined }]);
  assert.equal(reached, 1);
});

Deno.test("http signature: the keyId names the certificate sent as conformant libraries write it", async () => {
  const issuer = tpp.cert.issuer; // "CN=D-TRUST CA 2-1 2015, O=Test QTSP, C=GE"
  const forms = [
    `SN=9fa1,CA=${issuer}`, // lower-case hex
    "SN=09FA1,CA=C=GE,O=Test QTSP,CN=D-TRUST CA 2-1 2015", // RFC 4514 order, a leading zero
    "SN=9FA1,CA=cn=d-trust ca 2-1 2015,  o=TEST  QTSP ,c=ge", // case and spaces
    "SN=9FA1,CA=CN=D-TRUST CA 2-1 2015,O=Test QTSP,OID.2.5.4.6=GE", // an attribute by its OID
    "SN=9FA1,CA=CN=D-TRUST CA 2-1 2015,O=Test QTSP,C=#13024745", // C as hex BER, as Java can
  ];
  const requests = await Promise.all(forms.map(async (keyId) => ({
    headers: await exampleSignature({ keyId }),
  })));
  const { answers } = await send(requests, policy("http_signature"));
  assert.deepEqual(answers.map((a) => a.status), forms.map(() => 201), JSON.stringify(answers));
});

Deno.test("http signature: a keyId that names another certificate than the one sent is refused", async () => {
  const forms = [
    "SN=9FA2,CA=CN=D-TRUST%20CA%202-1%202015,O=Test%20QTSP,C=GE", // another serial of the CA
    "SN=9FA1,CA=CN=D-TRUST%20CA%202-1%202016,O=Test%20QTSP,C=GE", // another issuer
    "SN=9FA1,CA=CN=D-TRUST%20CA%202-1%202015,O=Test%20QTSP", // an attribute left out
    "SN=9FA1,CA=CN=D-TRUST%20CA%202-1%202015,O=Test%20QTSP,C=GE,C=GE", // one too many
  ];
  const requests = await Promise.all(forms.map(async (keyId) => ({
    headers: await exampleSignature({ keyId }),
  })));
  const { answers, reached } = await send(requests, policy("http_signature"));
  for (const answer of answers) {
    assert.equal(answer.status, 401);
    assert.match(answer.text, /^The Signature keyId names SN=/);
  }
  assert.equal(reached, 0);
});

Deno.test("http signature: the example form is refused where the policy covers (request-target) or requires a time", async () => {
  const withTarget = await send(
    [{ headers: await exampleSignature() }],
    policy("http_signature", COVER_TARGET),
  );
  assert.deepEqual(withTarget.answers, [{
    status: 401,
    text: 'The Signature headers list must cover "(request-target)"',
  }]);
  const untimed = await exampleSignature({ headers: EXAMPLE_HEADERS.slice(0, 4) });
  const byDefault = await send([{ headers: untimed }], policy("http_signature"));
  assert.deepEqual(byDefault.answers.map((a) => a.status), [201]);
  const timed = await send(
    [{ headers: untimed }],
    policy("http_signature", { require_time: true }),
  );
  assert.deepEqual(timed.answers, [{
    status: 401,
    text: 'The Signature headers list must cover "date" or "(created)"',
  }]);
  assert.equal(withTarget.reached + timed.reached, 0);
});

Deno.test("http signature: under the standard's minimum a signed request is good once, and only for its body", async () => {
  const signed = await exampleSignature();
  const { answers, reached } = await send([
    { headers: signed },
    { headers: signed }, // the same request again: the first answer, the core not called
    { headers: signed, path: "/v1/payments/foreign" }, // moved to another path
  ], policy("http_signature"));
  assert.deepEqual(answers.map((a) => a.status), [201, 201, 400]);
  assert.match(answers[2].text, /was already used for another request/);
  assert.equal(reached, 1);
});

Deno.test("jws: sigD.pars without (request-target) passes by default and is refused where the policy covers it", async () => {
  const signed = await signJws(tpp, payment(), { pars: EXAMPLE_HEADERS.slice(0, 4) });
  const byDefault = await send([{ headers: signed }], policy("jws_signature"));
  assert.deepEqual(byDefault.answers, [{ status: 201, text: undefined }]);
  const covered = await send([{ headers: signed }], policy("jws_signature", COVER_TARGET));
  assert.deepEqual(covered.answers, [{
    status: 401,
    text: 'The JWS "sigD.pars" must cover "(request-target)"',
  }]);
  assert.equal(covered.reached, 0);
});
