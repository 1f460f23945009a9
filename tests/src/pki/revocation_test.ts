import assert from "node:assert/strict";
import { parseCertificate } from "../../../src/pki/certificate.ts";
import { RevocationChecker } from "../../../src/pki/revocation.ts";
import { type RevocationOutcome, revocationSection } from "../../../src/pki/revocation_policy.ts";
import { createMetrics } from "../../../src/lib/metrics.ts";
import { memoryLogger } from "../../../src/lib/log.ts";
import { issue } from "../../support/pki.ts";
import { countingProxy, freePort, opensslCa, serveBytes } from "../../support/openssl_ca.ts";

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
  // Due for a refresh: the cached status answers at once, the refresh runs behind it.
  now += 11 * 60_000;
  assert.equal((await outcome(check, good)).kind, "good");
  await outcome(check, good);
  for (let i = 0; i < 50 && proxy.hits < 2; i++) await new Promise((r) => setTimeout(r, 20));
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
  for (let i = 0; i < 50 && proxy.hits < 2; i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 100));
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
  const file = `${ca.dir}/policy.crl`;
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
