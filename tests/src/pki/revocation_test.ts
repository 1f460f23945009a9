import assert from "node:assert/strict";
import "reflect-metadata";
import { X509CrlGenerator } from "@peculiar/x509";
import { parseCertificate } from "../../../src/pki/certificate.ts";
import { RevocationChecker } from "../../../src/pki/revocation.ts";
import { type RevocationOutcome, revocationSection } from "../../../src/pki/revocation_policy.ts";
import { createMetrics } from "../../../src/lib/metrics.ts";
import { memoryLogger } from "../../../src/lib/log.ts";
import { createCa, issue, type Issued } from "../../support/pki.ts";
import { ocspRequest } from "../../../src/pki/ocsp.ts";
import { countingProxy, freePort, opensslCa, serveBytes } from "../../support/openssl_ca.ts";
import { waitFor } from "../../support/wait.ts";

const HOUR = 3_600_000;
const ca = await opensslCa();
/** A CA of the same name with another key: its CRLs and responses must not be believed. */
const impostor = await opensslCa();
const issuer = await parseCertificate(ca.ca.pem);
const good = await issue(ca.ca);
const revoked = await issue(ca.ca);
const unknown = await issue(ca.ca);
await ca.valid(good);
await ca.revoke(revoked);
/** A certificate whose AIA names a responder on a port fixed now (started by its test). */
const aiaPort = freePort();
const withAia = await issue(ca.ca, { ocsp: [`http://127.0.0.1:${aiaPort}`] });
await ca.valid(withAia);

function checker(config: Record<string, unknown>, now = () => Date.now()) {
  const services = {
    fetch: globalThis.fetch,
    now,
    log: memoryLogger(),
    metrics: createMetrics(),
  };
  return {
    services,
    checker: new RevocationChecker(revocationSection.parse(config), services, 60_000),
  };
}

async function outcome(
  check: RevocationChecker,
  cert: { pem: string },
  stapled?: Uint8Array,
): Promise<RevocationOutcome> {
  return await check.check(await parseCertificate(cert.pem), issuer, stapled);
}

Deno.test("RevocationChecker.check() answers good, revoked and unknown from a real OCSP responder", async () => {
  await using responder = await ca.responder();
  const { checker: check, services } = checker({ ocsp_responder: responder.url });
  assert.deepEqual(await outcome(check, good), { kind: "good", source: "ocsp" });
  const answer = await outcome(check, revoked);
  assert.equal(answer.kind, "revoked");
  assert.ok(answer.kind === "revoked" && answer.revokedAt! <= Date.now());
  assert.deepEqual(await outcome(check, unknown), { kind: "unknown", source: "ocsp" });
  assert.equal(services.metrics.revocation.value({ source: "ocsp", outcome: "revoked" }), 1);
});

Deno.test("RevocationChecker.check() asks the responder its AIA names, and one signed by the CA itself", async () => {
  await using responder = await ca.responder({ signer: "ca", port: aiaPort });
  const { checker: check } = checker({});
  assert.deepEqual(await outcome(check, withAia), { kind: "good", source: "ocsp" });
  assert.equal(responder.url, `http://127.0.0.1:${aiaPort}`);
});

Deno.test("RevocationChecker.check() does not believe a response signed by a stranger", async () => {
  await using responder = await ca.responder({ signer: "stranger" });
  const { checker: check, services } = checker({ ocsp_responder: responder.url });
  const answer = await outcome(check, revoked);
  assert.equal(answer.kind, "unavailable");
  assert.match((answer as { reason: string }).reason, /did not authorise/);
  assert.equal(services.log.lines[0].msg, "revocation source unavailable");
});

Deno.test("RevocationChecker.check() does not believe a response of another CA of the same name", async () => {
  await impostor.valid(good);
  await using responder = await impostor.responder({ signer: "ca" });
  const { checker: check } = checker({ ocsp_responder: responder.url });
  const answer = await outcome(check, good);
  assert.equal(answer.kind, "unavailable");
  assert.match((answer as { reason: string }).reason, /signature does not verify|says nothing/);
});

Deno.test("RevocationChecker.check() does not believe a response past its nextUpdate", async () => {
  await using responder = await ca.responder({ minutes: 1 });
  const { checker: check } = checker({ ocsp_responder: responder.url }, () => Date.now() + HOUR);
  const answer = await outcome(check, good);
  assert.equal(answer.kind, "unavailable");
  assert.match((answer as { reason: string }).reason, /expired at its nextUpdate/);
});

Deno.test("RevocationChecker.check() asks once per certificate while the status holds, and refreshes it in the background", async () => {
  await using responder = await ca.responder({ minutes: 60 });
  await using proxy = countingProxy(() => responder.url);
  let now = Date.now();
  const { checker: check } = checker(
    { ocsp_responder: proxy.url, refresh_interval: "10m" },
    () => now,
  );
  const answers = await Promise.all(Array.from({ length: 20 }, () => outcome(check, good)));
  assert.ok(answers.every((a) => a.kind === "good"));
  assert.equal(proxy.hits, 1, "concurrent first checks share one request");
  for (let i = 0; i < 20; i++) await outcome(check, good);
  assert.equal(proxy.hits, 1, "a cached status costs no request");
  // Due for a refresh from refresh_interval on (to the millisecond): the cached status answers at
  // once, the refresh runs behind it.
  now += 10 * 60_000 - 1;
  assert.equal((await outcome(check, good)).kind, "good");
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(proxy.hits, 1, "not due yet");
  now += 1;
  assert.equal((await outcome(check, good)).kind, "good");
  await outcome(check, good);
  await settle(() => proxy.hits >= 2);
  assert.equal(proxy.hits, 2);
});

Deno.test("RevocationChecker.check() keeps a valid status when a refresh fails", async () => {
  const responder = await ca.responder({ minutes: 60 });
  let target = responder.url;
  await using proxy = countingProxy(() => target);
  let now = Date.now();
  const { checker: check } = checker(
    { ocsp_responder: proxy.url, refresh_interval: "10m", fetch_timeout: "1s" },
    () => now,
  );
  assert.equal((await outcome(check, revoked)).kind, "revoked");
  await responder.close();
  target = `http://127.0.0.1:${freePort()}`;
  now += 11 * 60_000;
  assert.equal((await outcome(check, revoked)).kind, "revoked");
  await settle(() => proxy.hits >= 2);
  assert.equal((await outcome(check, revoked)).kind, "revoked", "still revoked after the failure");
});

Deno.test("RevocationChecker.check() answers unavailable when the responder is down, and does not wait again within retry_interval", async () => {
  // A responder that is down: it accepts and closes every connection, and counts them.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let connections = 0;
  const accepting = (async () => {
    for await (const connection of listener) {
      connections++;
      connection.close();
    }
  })();
  try {
    const { checker: check, services } = checker({
      ocsp_responder: `http://127.0.0.1:${listener.addr.port}`,
      methods: ["ocsp"],
      retry_interval: "30s",
    });
    const first = await outcome(check, good);
    assert.equal(first.kind, "unavailable");
    assert.ok((first as { retryAt: number }).retryAt > Date.now() + 25_000);
    const tried = connections;
    assert.ok(tried >= 1, "the first check asked the responder");
    assert.equal((await outcome(check, good)).kind, "unavailable");
    assert.equal(connections, tried, "the second check, within retry_interval, asked nobody");
    assert.equal(services.metrics.revocation.value({ source: "ocsp", outcome: "unavailable" }), 1);
  } finally {
    listener.close();
    await accepting.catch(() => {});
  }
});

Deno.test("RevocationChecker.check() reads the CRL of the certificate's distribution point over HTTP", async () => {
  let crl = await ca.crl();
  await using server = serveBytes(() => crl);
  const inCrl = await issue(ca.ca, { crl: [server.url + "/ca.crl"] });
  const revokedInCrl = await issue(ca.ca, { crl: [server.url + "/ca.crl"] });
  await ca.revoke(revokedInCrl);
  crl = await ca.crl();
  const { checker: check, services } = checker({ methods: ["crl"] });
  assert.deepEqual(await outcome(check, inCrl), { kind: "good", source: "crl" });
  assert.equal((await outcome(check, revokedInCrl)).kind, "revoked");
  assert.equal(server.hits, 1, "one download serves every certificate of the CA");
  assert.equal(services.metrics.revocation.value({ source: "crl", outcome: "good" }), 1);
});

Deno.test("RevocationChecker.check() falls back to the CRL when the OCSP responder is down", async () => {
  const crl = await ca.crl();
  await using server = serveBytes(() => crl);
  const { checker: check } = checker({
    ocsp_responder: `http://127.0.0.1:${freePort()}`,
    crls: [server.url],
  });
  const answer = await outcome(check, revoked);
  assert.equal(answer.kind, "revoked");
  assert.equal((answer as { source: string }).source, "crl");
});

Deno.test("RevocationChecker.check() reads a CRL file of the policy", async () => {
  // A path that holds "http:" is still a path.
  await Deno.mkdir(`${ca.dir}/http:`, { recursive: true });
  const file = `${ca.dir}/http:/policy.crl`;
  await Deno.writeFile(file, await ca.crl());
  const { checker: check } = checker({ methods: ["crl"], crls: [file] });
  assert.equal((await outcome(check, revoked)).kind, "revoked");
  assert.equal((await outcome(check, good)).kind, "good");
});

Deno.test("RevocationChecker.check() does not believe a CRL signed by another key, nor an expired one", async () => {
  const forged = await impostor.crl();
  await using server = serveBytes(() => forged);
  const { checker: check } = checker({ methods: ["crl"], crls: [server.url] });
  const answer = await outcome(check, revoked);
  assert.equal(answer.kind, "unavailable");
  assert.match((answer as { reason: string }).reason, /signature does not verify/);

  const short = await ca.crl(1);
  await using server2 = serveBytes(() => short);
  const later = checker({ methods: ["crl"], crls: [server2.url] }, () => Date.now() + 3 * HOUR);
  const expired = await outcome(later.checker, revoked);
  assert.equal(expired.kind, "unavailable");
  assert.match((expired as { reason: string }).reason, /expired at its nextUpdate/);
});

Deno.test("RevocationChecker.check() says unchecked when neither policy nor certificate names a source", async () => {
  const { checker: check } = checker({});
  assert.deepEqual(await outcome(check, good), { kind: "unchecked" });
});

Deno.test("RevocationChecker.check() uses a stapled response that verifies, and ignores one that does not", async () => {
  await using responder = await ca.responder();
  await using stranger = await ca.responder({ signer: "stranger" });
  const staple = async (url: string, cert: { pem: string }) => {
    const { ocspRequest } = await import("../../../src/pki/ocsp.ts");
    const info = await parseCertificate(cert.pem);
    const body = await ocspRequest(info.cert, issuer.cert);
    const answer = await fetch(url, { method: "POST", body: body as BodyInit });
    return new Uint8Array(await answer.arrayBuffer());
  };
  const down = `http://127.0.0.1:${freePort()}`;
  const { checker: check, services } = checker({ ocsp_responder: down, methods: ["ocsp"] });
  assert.deepEqual(await outcome(check, good, await staple(responder.url, good)), {
    kind: "good",
    source: "stapled",
  });
  // A response about another certificate, or from a stranger, is no staple of this one.
  assert.equal(
    (await outcome(check, revoked, await staple(responder.url, good))).kind,
    "unavailable",
  );
  assert.equal(
    (await outcome(check, unknown, await staple(stranger.url, unknown))).kind,
    "unavailable",
  );
  assert.equal(services.metrics.revocation.value({ source: "stapled", outcome: "unavailable" }), 2);
});

Deno.test("RevocationChecker.check() answers a cached status without the network (the request path is a map lookup)", async () => {
  const responder = await ca.responder();
  const { checker: check, services } = checker({ ocsp_responder: responder.url });
  const info = await parseCertificate(good.pem);
  assert.equal((await check.check(info, issuer)).kind, "good");
  // The responder is gone: every later answer can only come from the cache.
  await responder.close();
  for (let i = 0; i < 1000; i++) assert.equal((await check.check(info, issuer)).kind, "good");
  assert.equal(services.metrics.revocation.value({ source: "ocsp", outcome: "good" }), 1);
});

/** A test server that records each request (method, headers, body) and answers with `answer`. */
function recorder(answer: (request: Request, body: Uint8Array) => Response | Promise<Response>) {
  const requests: { method: string; headers: Headers; body: Uint8Array }[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const body = new Uint8Array(await request.arrayBuffer());
      requests.push({ method: request.method, headers: request.headers, body });
      return await answer(request, body);
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** Forwards an OCSP request to `target`. */
async function forward(target: string, body: Uint8Array): Promise<Response> {
  const answer = await fetch(target, {
    method: "POST",
    headers: { "content-type": "application/ocsp-request" },
    body: body as BodyInit,
  });
  return new Response(await answer.arrayBuffer(), { status: answer.status });
}

/** The DER of the OCSP nonce extension's OID (1.3.6.1.5.5.7.48.1.2). */
const NONCE_OID = [0x06, 0x09, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01, 0x02];

function holds(bytes: Uint8Array, part: number[]): boolean {
  outer: for (let i = 0; i + part.length <= bytes.length; i++) {
    for (let j = 0; j < part.length; j++) if (bytes[i + j] !== part[j]) continue outer;
    return true;
  }
  return false;
}

/** Time for a background refresh that should not start to show up if it did. */
async function pause(): Promise<void> {
  await new Promise((r) => setTimeout(r, 150));
}

/**
 * Waits until `until()` holds (10 s at the most: a bound, no verdict), then a moment for the
 * request it counts to be answered and taken in.
 */
async function settle(until: () => boolean): Promise<void> {
  await waitFor(until, 10_000, 20);
  await new Promise((r) => setTimeout(r, 50));
}

/** A CRL of the openssl CA made with its key (openssl cannot leave out nextUpdate). */
async function peculiarCrl(
  options: { thisUpdate: Date; nextUpdate?: Date; revoked?: string[]; signer?: Issued },
): Promise<Uint8Array> {
  const signer = options.signer ?? ca.ca;
  const crl = await X509CrlGenerator.create({
    issuer: signer.cert.subject,
    thisUpdate: options.thisUpdate,
    nextUpdate: options.nextUpdate,
    entries: (options.revoked ?? []).map((serialNumber) => ({ serialNumber })),
    signingAlgorithm: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    signingKey: signer.keys.privateKey,
  });
  return new Uint8Array(crl.rawData);
}

/** Milliseconds rounded down to the second, as CRLs and OCSP responses carry their dates. */
function second(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

Deno.test("RevocationChecker.check() posts an OCSP request with the OCSP media types and a nonce, and none when the policy says so", async () => {
  await using responder = await ca.responder();
  await using proxy = recorder((_, body) => forward(responder.url, body));
  const { checker: check } = checker({ ocsp_responder: proxy.url, methods: ["ocsp"] });
  assert.deepEqual(await outcome(check, good), { kind: "good", source: "ocsp" });
  const [sent] = proxy.requests;
  assert.equal(sent.method, "POST");
  assert.equal(sent.headers.get("content-type"), "application/ocsp-request");
  assert.equal(sent.headers.get("accept"), "application/ocsp-response");
  assert.ok(holds(sent.body, NONCE_OID), "the request carries a nonce");
  const without = checker({ ocsp_responder: proxy.url, methods: ["ocsp"], nonce: false });
  assert.deepEqual(await outcome(without.checker, good), { kind: "good", source: "ocsp" });
  assert.equal(proxy.requests.length, 2);
  assert.ok(!holds(proxy.requests[1].body, NONCE_OID), "no nonce under nonce: false");
});

Deno.test("RevocationChecker.check() asks the policy's responder rather than the one of the certificate's AIA", async () => {
  // The AIA's port is not listening in this test.
  await using responder = await ca.responder();
  const { checker: check } = checker({ ocsp_responder: responder.url, methods: ["ocsp"] });
  assert.deepEqual(await outcome(check, withAia), { kind: "good", source: "ocsp" });
});

Deno.test("RevocationChecker.check() takes only http(s) URLs of the AIA and the distribution points", async () => {
  const ldap = await issue(ca.ca, {
    keyType: "EC",
    // "http:" inside an LDAP URL does not make it one.
    ocsp: ["ldap://127.0.0.1/http://ocsp"],
    crl: ["ldap://127.0.0.1/cn=ca?certificateRevocationList;http://crl"],
  });
  const { checker: check } = checker({});
  assert.deepEqual(await outcome(check, ldap), { kind: "unchecked" });
  // Scheme names are case-insensitive.
  const crl = await ca.crl();
  await using server = serveBytes(() => crl);
  const upper = await issue(ca.ca, {
    keyType: "EC",
    crl: [server.url.replace("http:", "HTTP:") + "/ca.crl"],
  });
  assert.deepEqual(await outcome(check, upper), { kind: "good", source: "crl" });
  const port = freePort();
  const upperAia = await issue(ca.ca, { keyType: "EC", ocsp: [`HTTP://127.0.0.1:${port}`] });
  await ca.valid(upperAia);
  await using _responder = await ca.responder({ port });
  assert.deepEqual(await outcome(check, upperAia), { kind: "good", source: "ocsp" });
});

Deno.test("RevocationChecker.check() tries the sources in the policy's order", async () => {
  await using responder = await ca.responder();
  const crl = await ca.crl();
  await using server = serveBytes(() => crl);
  const sources = { ocsp_responder: responder.url, crls: [server.url] };
  const ocspFirst = checker(sources).checker;
  assert.deepEqual(await outcome(ocspFirst, good), { kind: "good", source: "ocsp" });
  const crlFirst = checker({ ...sources, methods: ["crl", "ocsp"] }).checker;
  assert.deepEqual(await outcome(crlFirst, good), { kind: "good", source: "crl" });
  const crlOnly = checker({ ...sources, methods: ["crl"] }).checker;
  assert.deepEqual(await outcome(crlOnly, revoked), {
    kind: "revoked",
    source: "crl",
    revokedAt: (await outcome(crlOnly, revoked) as { revokedAt: number }).revokedAt,
  });
  assert.equal(responder.url.length > 0 && server.hits, 2, "the OCSP-first checker used no CRL");
});

Deno.test("RevocationChecker.check() answers unchecked for a policy CRL of another CA, unavailable for one it cannot download", async () => {
  const other = await peculiarCrl({
    thisUpdate: new Date(second(Date.now())),
    nextUpdate: new Date(Date.now() + HOUR),
    signer: await createCa("Another QTSP CA"),
  });
  await using server = serveBytes(() => other);
  const { checker: check, services } = checker({ methods: ["crl"], crls: [server.url] });
  assert.deepEqual(await outcome(check, revoked), { kind: "unchecked" });
  assert.equal(services.metrics.revocation.value({ source: "crl", outcome: "unavailable" }), 0);
  const down = `http://127.0.0.1:${freePort()}/ca.crl`;
  const failing = checker({ methods: ["crl"], crls: [down] });
  const answer = await outcome(failing.checker, revoked);
  assert.equal(answer.kind, "unavailable");
  assert.match((answer as { reason: string }).reason, new RegExp(`^crl ${down}: `));
});

Deno.test("RevocationChecker.check() says why each source failed, in its log and its answer", async () => {
  await using refusing = recorder(() => new Response("no", { status: 404 }));
  const { checker: check, services } = checker({
    ocsp_responder: refusing.url,
    crls: [refusing.url + "/ca.crl"],
  });
  const answer = await outcome(check, good);
  assert.equal(answer.kind, "unavailable");
  assert.equal(
    (answer as { reason: string }).reason,
    `ocsp ${refusing.url}: Error: HTTP 404; crl ${refusing.url}/ca.crl: Error: HTTP 404`,
  );
  assert.equal(refusing.requests[1].headers.get("accept"), "application/pkix-crl");
  assert.equal(refusing.requests[1].method, "GET");
  assert.deepEqual(services.log.lines[0], {
    ...services.log.lines[0],
    msg: "revocation source unavailable",
    source: "ocsp",
    where: refusing.url,
    error: "Error: HTTP 404",
  });
  assert.equal(services.log.lines[1].source, "crl");
  assert.equal(services.metrics.revocation.value({ source: "crl", outcome: "unavailable" }), 1);
  assert.equal(services.metrics.revocation.value({ source: "ocsp", outcome: "unavailable" }), 1);
});

Deno.test("RevocationChecker.check() refuses a CRL larger than crl_max_bytes, with or without Content-Length", async () => {
  const crl = await ca.crl();
  await using sized = serveBytes(() => crl);
  await using streamed = recorder(() =>
    new Response(
      // In three parts, apart in time, so that the client reads them as separate chunks.
      new ReadableStream({
        async start(controller) {
          controller.enqueue(crl.subarray(0, 100));
          await new Promise((r) => setTimeout(r, 30));
          controller.enqueue(crl.subarray(100, 300));
          await new Promise((r) => setTimeout(r, 30));
          controller.enqueue(crl.subarray(300));
          controller.close();
        },
      }),
    )
  );
  for (const url of [sized.url, streamed.url]) {
    const exact = checker({ methods: ["crl"], crls: [url], crl_max_bytes: crl.length });
    assert.equal((await outcome(exact.checker, revoked)).kind, "revoked", url);
    const small = checker({ methods: ["crl"], crls: [url], crl_max_bytes: crl.length - 1 });
    const answer = await outcome(small.checker, revoked);
    assert.equal(answer.kind, "unavailable", url);
    assert.match(
      (answer as { reason: string }).reason,
      new RegExp(`: the answer is larger than ${crl.length - 1} bytes$`),
    );
  }
});

Deno.test("RevocationChecker.check() keeps an OCSP status until its nextUpdate plus the clock skew, and refreshes it at three quarters of its time", async () => {
  const responder = await ca.responder({ minutes: 4 });
  let target = responder.url;
  await using proxy = countingProxy(() => target);
  const start = Date.now();
  let now = start;
  const { checker: check } = checker({ ocsp_responder: proxy.url, methods: ["ocsp"] }, () => now);
  assert.equal((await outcome(check, good)).kind, "good");
  // Held until nextUpdate (4 minutes on) plus the skew (1 minute): a refresh is due after 3:45.
  now = start + 3 * 60_000 + 35_000;
  assert.equal((await outcome(check, good)).kind, "good");
  await pause();
  assert.equal(proxy.hits, 1, "not due yet");
  // The responder is gone: from now on only the cache can answer good.
  await responder.close();
  target = `http://127.0.0.1:${freePort()}`;
  now = start + 3 * 60_000 + 55_000;
  assert.equal((await outcome(check, good)).kind, "good");
  await settle(() => proxy.hits > 1);
  assert.equal(proxy.hits, 2, "due: refreshed in the background");
  // Held until nextUpdate plus the skew, whatever the failed refresh said.
  now = start + 4 * 60_000 + 55_000;
  assert.equal((await outcome(check, good)).kind, "good");
  now = start + 5 * 60_000 + 5_000;
  assert.equal((await outcome(check, good)).kind, "unavailable");
});

Deno.test("RevocationChecker.check() after a failed refresh waits retry_interval before the next one", async () => {
  const responder = await ca.responder({ minutes: 60 });
  let target = responder.url;
  await using proxy = countingProxy(() => target);
  let now = Date.now();
  const { checker: check } = checker(
    {
      ocsp_responder: proxy.url,
      methods: ["ocsp"],
      refresh_interval: "10m",
      retry_interval: "30s",
    },
    () => now,
  );
  assert.equal((await outcome(check, good)).kind, "good");
  await responder.close();
  target = `http://127.0.0.1:${freePort()}`;
  now += 11 * 60_000;
  assert.equal((await outcome(check, good)).kind, "good");
  await settle(() => proxy.hits > 1);
  assert.equal(proxy.hits, 2);
  now += 29_999;
  assert.equal((await outcome(check, good)).kind, "good");
  await pause();
  assert.equal(proxy.hits, 2, "a millisecond within retry_interval: no new attempt");
  now += 1;
  assert.equal((await outcome(check, good)).kind, "good");
  await settle(() => proxy.hits > 2);
  assert.equal(proxy.hits, 3, "after retry_interval: tried again");
});

Deno.test("RevocationChecker.check() tries an unavailable source again after retry_interval, not before", async () => {
  await using refusing = recorder(() => new Response("busy", { status: 503 }));
  let now = Date.now();
  const { checker: check } = checker(
    { ocsp_responder: refusing.url, methods: ["ocsp"], retry_interval: "30s" },
    () => now,
  );
  const first = await outcome(check, good);
  assert.deepEqual(first, {
    kind: "unavailable",
    reason: `ocsp ${refusing.url}: Error: HTTP 503`,
    retryAt: now + 30_000,
  });
  now += 29_999;
  assert.equal((await outcome(check, good)).kind, "unavailable");
  assert.equal(refusing.requests.length, 1);
  now += 1;
  assert.equal((await outcome(check, good)).kind, "unavailable");
  assert.equal(refusing.requests.length, 2);
});

Deno.test("RevocationChecker.check() uses a verifying staple over a cached unavailable status, and a cached status over a staple", async () => {
  await using responder = await ca.responder();
  const staple = async (cert: { pem: string }) => {
    const info = await parseCertificate(cert.pem);
    const answer = await fetch(responder.url, {
      method: "POST",
      body: await ocspRequest(info.cert, issuer.cert) as BodyInit,
    });
    return new Uint8Array(await answer.arrayBuffer());
  };
  const { checker: check, services } = checker({
    ocsp_responder: `http://127.0.0.1:${freePort()}`,
    methods: ["ocsp"],
  });
  assert.equal((await outcome(check, revoked)).kind, "unavailable");
  const stapled = await outcome(check, revoked, await staple(revoked));
  assert.equal(stapled.kind, "revoked");
  assert.equal((stapled as { source: string }).source, "stapled");
  assert.equal(services.metrics.revocation.value({ source: "stapled", outcome: "revoked" }), 1);
  // The revoked status is cached: a staple (even a good one of another certificate) is not read.
  assert.equal((await outcome(check, revoked, await staple(good))).kind, "revoked");
  assert.equal(services.metrics.revocation.value({ source: "stapled", outcome: "unavailable" }), 0);
  assert.equal(services.log.lines.some((l) => l.msg === "stapled OCSP response ignored"), false);
  await outcome(check, unknown, new Uint8Array([0x30, 0x00]));
  assert.ok(services.log.lines.some((l) => l.msg === "stapled OCSP response ignored"));
});

Deno.test("RevocationChecker.check() uses a verifying staple over a cached unchecked answer", async () => {
  // No source in the policy or the certificate: unchecked, cached for refresh_interval. A request
  // that then brings a staple (hard mode refused the first for lack of any) is checked with it.
  await using responder = await ca.responder();
  const info = await parseCertificate(revoked.pem);
  const answer = await fetch(responder.url, {
    method: "POST",
    body: await ocspRequest(info.cert, issuer.cert) as BodyInit,
  });
  const staple = new Uint8Array(await answer.arrayBuffer());
  const { checker: check } = checker({});
  assert.deepEqual(await outcome(check, revoked), { kind: "unchecked" });
  const stapled = await outcome(check, revoked, staple);
  assert.equal(stapled.kind, "revoked");
  assert.equal((stapled as { source: string }).source, "stapled");
  assert.equal((await outcome(check, revoked)).kind, "revoked", "the staple's status is cached");
});

Deno.test("RevocationChecker.check() keeps statuses per certificate and issuer", async () => {
  await using responder = await ca.responder();
  const { checker: check } = checker({ ocsp_responder: responder.url, methods: ["ocsp"] });
  const info = await parseCertificate(good.pem);
  assert.equal((await check.check(info, issuer)).kind, "good");
  // Asked about the same certificate under another CA of the same name, the answer is not the
  // cached one: the responder's answer names the real CA's key.
  const other = await parseCertificate(impostor.ca.pem);
  assert.notEqual((await check.check(info, other)).kind, "good");
  assert.equal((await check.check(info, issuer)).kind, "good");
});

Deno.test("RevocationChecker.check() keeps at most cache_size statuses", async () => {
  await using responder = await ca.responder();
  await using proxy = countingProxy(() => responder.url);
  const { checker: check } = checker({ ocsp_responder: proxy.url, cache_size: 1 });
  await outcome(check, good);
  await outcome(check, good);
  assert.equal(proxy.hits, 1);
  await outcome(check, revoked);
  await outcome(check, good);
  assert.equal(proxy.hits, 3, "the status of good was dropped for the one of revoked");
});

Deno.test("RevocationChecker.check() keeps at most cache_size CRLs (and at most 1000)", async () => {
  const other = await peculiarCrl({
    thisUpdate: new Date(second(Date.now())),
    nextUpdate: new Date(Date.now() + HOUR),
    signer: impostor.ca,
  });
  const own = await ca.crl();
  await using otherServer = serveBytes(() => other);
  await using ownServer = serveBytes(() => own);
  const crls = [otherServer.url, ownServer.url];
  const small = checker({ methods: ["crl"], crls, cache_size: 1 }).checker;
  const large = checker({ methods: ["crl"], crls }).checker;
  for (const check of [small, large]) {
    assert.equal((await outcome(check, revoked)).kind, "revoked");
    assert.equal((await outcome(check, good)).kind, "good");
  }
  // The impostor's CRL has the CA's name, so each check reads both (only the CA's verifies). With
  // cache_size 1 each CRL drops the other: both are downloaded again for the second certificate
  // (2 + 2); the default cache keeps both (1 + 1).
  assert.equal(otherServer.hits, 3);
  assert.equal(ownServer.hits, 3);
});

Deno.test("RevocationChecker.check() downloads a CRL once for concurrent checks, and not again within retry_interval after a failure", async () => {
  let status = 200;
  const crl = await ca.crl();
  await using server = recorder(() => new Response(crl as BodyInit, { status }));
  let now = Date.now();
  const { checker: check } = checker(
    { methods: ["crl"], crls: [server.url], retry_interval: "30s" },
    () => now,
  );
  const answers = await Promise.all([good, revoked, unknown, good].map((c) => outcome(check, c)));
  assert.deepEqual(answers.map((a) => a.kind), ["good", "revoked", "good", "good"]);
  assert.equal(server.requests.length, 1);

  status = 500;
  const failing = checker(
    { methods: ["crl"], crls: [server.url], retry_interval: "30s" },
    () => now,
  ).checker;
  assert.equal((await outcome(failing, good)).kind, "unavailable");
  assert.equal(server.requests.length, 2);
  now += 29_999;
  const again = await outcome(failing, revoked);
  assert.match((again as { reason: string }).reason, /the last attempt failed; retried later/);
  assert.equal(server.requests.length, 2);
  status = 200;
  now += 1;
  // The status of good (unavailable since the first failure) has run out, and so has the CRL's
  // back-off, to the millisecond: the CRL is tried again.
  assert.deepEqual(await outcome(failing, good), { kind: "good", source: "crl" });
  assert.equal(server.requests.length, 3);
});

Deno.test("RevocationChecker.check() keeps a CRL without nextUpdate for refresh_interval after its thisUpdate", async () => {
  const start = second(Date.now());
  const list = await peculiarCrl({ thisUpdate: new Date(start - 50 * 60_000), revoked: [] });
  await using server = serveBytes(() => list);
  let now = start;
  const { checker: check } = checker(
    { methods: ["crl"], crls: [server.url], refresh_interval: "1h" },
    () => now,
  );
  assert.deepEqual(await outcome(check, revoked), { kind: "good", source: "crl" });
  // Held until thisUpdate + 1 h (start + 10 min), refreshed from three quarters of that on.
  now = start + 7 * 60_000;
  assert.equal((await outcome(check, good)).kind, "good");
  await pause();
  assert.equal(server.hits, 1, "not due yet");
  now = start + 8 * 60_000;
  assert.equal((await outcome(check, good)).kind, "good");
  await settle(() => server.hits > 1);
  assert.equal(server.hits, 2, "due: refreshed in the background");
  now = start + 10 * 60_000 + 1;
  const answer = await outcome(check, good);
  assert.equal(answer.kind, "unavailable");
  assert.match((answer as { reason: string }).reason, /older than the policy allows/);
});

Deno.test("revocationChecker() makes one checker per app and configuration", async () => {
  const { revocationChecker } = await import("../../../src/pki/revocation.ts");
  const { services } = checker({});
  const config = revocationSection.parse({});
  const first = revocationChecker(config, services, 60_000);
  assert.equal(revocationChecker(revocationSection.parse({}), services, 60_000), first);
  assert.notEqual(revocationChecker(config, services, 30_000), first);
  assert.notEqual(
    revocationChecker(revocationSection.parse({ nonce: false }), services, 60_000),
    first,
  );
  assert.notEqual(revocationChecker(config, checker({}).services, 60_000), first);
});

Deno.test("RevocationChecker.check() after a failed CRL refresh keeps the CRL and waits retry_interval before the next download", async () => {
  let status = 200;
  const crl = await ca.crl();
  await using server = recorder(() => new Response(crl as BodyInit, { status }));
  let now = Date.now();
  const { checker: check } = checker(
    { methods: ["crl"], crls: [server.url], refresh_interval: "10m", retry_interval: "30s" },
    () => now,
  );
  assert.deepEqual(await outcome(check, good), { kind: "good", source: "crl" });
  status = 500;
  now += 11 * 60_000;
  assert.equal((await outcome(check, revoked)).kind, "revoked");
  await settle(() => server.requests.length > 1);
  assert.equal(server.requests.length, 2, "due: a refresh, which fails");
  now += 10_000;
  assert.equal((await outcome(check, revoked)).kind, "revoked", "the CRL is kept");
  assert.equal((await outcome(check, good)).kind, "good");
  await pause();
  assert.equal(server.requests.length, 2, "within retry_interval: no new download");
  now += 21_000;
  assert.equal((await outcome(check, good)).kind, "good");
  await settle(() => server.requests.length > 2);
  assert.equal(server.requests.length, 3, "after retry_interval: downloaded again");
});

Deno.test("RevocationChecker.check() takes a revocation found by a background refresh at once", async () => {
  const cert = await issue(ca.ca, { keyType: "EC" });
  await ca.valid(cert);
  await using before = await ca.responder({ minutes: 60 });
  let target = before.url;
  await using proxy = countingProxy(() => target);
  let now = Date.now();
  const { checker: check } = checker(
    { ocsp_responder: proxy.url, methods: ["ocsp"], refresh_interval: "10m" },
    () => now,
  );
  assert.equal((await outcome(check, cert)).kind, "good");
  await ca.revoke(cert);
  await using after = await ca.responder({ minutes: 60 });
  target = after.url;
  now += 11 * 60_000;
  assert.equal((await outcome(check, cert)).kind, "good", "the cached status, while refreshing");
  // The refresh's answer is read and verified behind the requests: wait for it (up to 5 s).
  let kind = "good";
  for (let i = 0; i < 250 && kind !== "revoked"; i++) {
    await new Promise((r) => setTimeout(r, 20));
    kind = (await outcome(check, cert)).kind;
  }
  assert.equal(kind, "revoked");
  assert.equal(proxy.hits, 2);
});

Deno.test("RevocationChecker.check() gives up a status at nextUpdate plus the skew when the source fails, to the millisecond", async () => {
  let status = 200;
  const nextUpdate = second(Date.now()) + 30 * 60_000;
  const list = await peculiarCrl({
    thisUpdate: new Date(second(Date.now()) - 60_000),
    nextUpdate: new Date(nextUpdate),
  });
  await using server = recorder(() => new Response(list as BodyInit, { status }));
  let now = Date.now();
  const { checker: check } = checker(
    { methods: ["crl"], crls: [server.url], refresh_interval: "1h" },
    () => now,
  );
  assert.deepEqual(await outcome(check, good), { kind: "good", source: "crl" });
  status = 500;
  // The skew of these checkers is 60 s.
  now = nextUpdate + 60_000 - 1;
  assert.equal((await outcome(check, good)).kind, "good");
  await settle(() => server.requests.length > 1);
  now = nextUpdate + 60_000;
  assert.equal((await outcome(check, good)).kind, "unavailable");
});

Deno.test("RevocationChecker.check() answers the new retry time when a fetch fails again over an unavailable status", async () => {
  await using refusing = recorder(() => new Response("busy", { status: 503 }));
  let now = Date.now();
  const { checker: check } = checker(
    { ocsp_responder: refusing.url, methods: ["ocsp"], retry_interval: "30s" },
    () => now,
  );
  assert.equal((await outcome(check, good) as { retryAt: number }).retryAt, now + 30_000);
  // A staple that does not verify makes the checker ask the responder again at once.
  now += 10_000;
  const again = await outcome(check, good, new Uint8Array([0x30, 0x00]));
  assert.equal(again.kind, "unavailable");
  assert.equal((again as { retryAt: number }).retryAt, now + 30_000);
  assert.equal(refusing.requests.length, 2);
});

Deno.test("RevocationChecker.check() counts a CRL that fails its signature as a source: unavailable, not unchecked", async () => {
  const forged = await impostor.crl();
  await using server = serveBytes(() => forged);
  const { checker: check } = checker({
    ocsp_responder: `http://127.0.0.1:${freePort()}`,
    crls: [server.url],
  });
  const answer = await outcome(check, revoked);
  assert.equal(answer.kind, "unavailable");
  assert.match((answer as { reason: string }).reason, /; crl .*signature does not verify/);
});

Deno.test("RevocationChecker.check() keeps an unchecked answer for refresh_interval without looking again", async () => {
  const start = second(Date.now());
  const other = await peculiarCrl({
    thisUpdate: new Date(start - 60_000),
    nextUpdate: new Date(start + 60_000),
    signer: await createCa("Another QTSP CA"),
  });
  await using server = serveBytes(() => other);
  let now = start;
  const { checker: check } = checker(
    { methods: ["crl"], crls: [server.url], refresh_interval: "1h" },
    () => now,
  );
  assert.deepEqual(await outcome(check, good), { kind: "unchecked" });
  assert.equal(server.hits, 1);
  // The other CA's CRL ran out (nextUpdate + skew); the unchecked answer still holds.
  now = start + 3 * 60_000;
  assert.deepEqual(await outcome(check, good), { kind: "unchecked" });
  await pause();
  assert.equal(server.hits, 1);
});

Deno.test("RevocationChecker.check() takes an empty answer for no CRL", async () => {
  await using empty = recorder(() => new Response(null, { status: 204 }));
  const { checker: check } = checker({ methods: ["crl"], crls: [empty.url] });
  const answer = await outcome(check, revoked);
  assert.equal(answer.kind, "unavailable");
  assert.equal(
    (answer as { reason: string }).reason,
    `crl ${empty.url}: CrlError: It is not a DER or PEM encoded CRL`,
  );
});

Deno.test("RevocationChecker.check() says which status a source answered without a body", async () => {
  await using unchanged = recorder(() => new Response(null, { status: 304 }));
  const { checker: check } = checker({ ocsp_responder: unchanged.url, methods: ["ocsp"] });
  const answer = await outcome(check, good);
  assert.equal((answer as { reason: string }).reason, `ocsp ${unchanged.url}: Error: HTTP 304`);
});

Deno.test("RevocationChecker.check() refreshes a CRL from three quarters of its time, to the millisecond", async () => {
  const start = second(Date.now());
  // Held until nextUpdate (39 min on) plus the skew (1 min): due for a refresh after 30 min.
  const list = await peculiarCrl({
    thisUpdate: new Date(start - 60_000),
    nextUpdate: new Date(start + 39 * 60_000),
  });
  await using server = serveBytes(() => list);
  let now = start;
  const { checker: check } = checker(
    { methods: ["crl"], crls: [server.url], refresh_interval: "1h" },
    () => now,
  );
  assert.equal((await outcome(check, good)).kind, "good");
  now = start + 30 * 60_000 - 1;
  assert.equal((await outcome(check, good)).kind, "good");
  await pause();
  assert.equal(server.hits, 1, "not due yet");
  now = start + 30 * 60_000;
  assert.equal((await outcome(check, good)).kind, "good");
  await settle(() => server.hits > 1);
  assert.equal(server.hits, 2, "due: refreshed");
});
