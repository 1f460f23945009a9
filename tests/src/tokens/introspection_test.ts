import assert from "node:assert/strict";
import { exportPKCS8, generateKeyPair, jwtVerify } from "jose";
import {
  InactiveToken,
  introspectionOptions,
  introspectionProblems,
  IntrospectionUnavailable,
  Introspector,
  introspector,
  looksLikeJwt,
  privateKeyPem,
} from "../../../src/tokens/introspection.ts";
import { createMetrics } from "../../../src/lib/metrics.ts";
import { closedPort, startUpstream } from "../../support/upstream.ts";
import { withoutSyncFs } from "../../support/no_sync_fs.ts";
import { readPolicyFiles } from "../../../src/lib/policy_files.ts";

Deno.test("looksLikeJwt() tells a compact JWS from an opaque token", () => {
  const header = btoa(JSON.stringify({ alg: "RS256" })).replace(/=+$/, "");
  assert.equal(looksLikeJwt(`${header}.eyJzdWIiOiJ4In0.c2ln`), true);
  assert.equal(looksLikeJwt("2YotnFZFEjr1zCsicMWpAA"), false);
  assert.equal(looksLikeJwt("a.b.c"), false, "a header that is no JSON");
  assert.equal(looksLikeJwt(`${btoa("{}")}.e30.c2ln`), false, "a header without alg");
});

Deno.test("Introspector.claims() form-encodes the client credentials in HTTP Basic and shares one request among concurrent callers", async () => {
  await using endpoint = startUpstream(async () => {
    await new Promise((r) => setTimeout(r, 30));
    return Response.json({ active: true, scope: "accounts" });
  });
  const introspector = new Introspector(
    introspectionOptions.parse({ url: endpoint.url, client_id: "edge:1", client_secret: "a b+c" }),
    { fetch: globalThis.fetch, now: Date.now },
  );
  const all = await Promise.all([1, 2, 3].map(() => introspector.claims("t")));
  assert.ok(all.every((c) => c.scope === "accounts"));
  assert.equal(endpoint.received.length, 1);
  assert.equal(
    endpoint.received[0].headers.get("authorization"),
    `Basic ${btoa("edge%3A1:a+b%2Bc")}`,
  );
});

Deno.test("privateKeyPem() reads a private_key file read ahead with the policy, never synchronously (Deno Deploy)", async () => {
  const file = await Deno.makeTempFile({ suffix: ".pem" });
  try {
    const pem =
      "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n";
    await Deno.writeTextFile(file, pem);
    await readPolicyFiles(
      `defaults:\n  bearer_token:\n    introspection:\n      private_key: ${file}\n`,
    );
    assert.equal(await withoutSyncFs(() => privateKeyPem(file)), pem);
  } finally {
    await Deno.remove(file);
  }
});

/** The endpoint's answers per token (JSON, or a Response made per request), on 127.0.0.1; a token it does not know is inactive. */
function endpointFor(answers: Record<string, unknown>, options: { hold?: Promise<void> } = {}) {
  return startUpstream(async (_, recorded) => {
    await options.hold;
    const token = new URLSearchParams(recorded.body).get("token") ?? "";
    const answer = answers[token] ?? { active: false };
    return typeof answer === "function" ? answer() : Response.json(answer);
  });
}

/** An introspector of `url` on a clock the test moves. */
function clocked(url: string, options: Record<string, unknown> = {}) {
  const clock = { now: 1_700_000_000_000 };
  const metrics = createMetrics();
  const introspector = new Introspector(
    introspectionOptions.parse({ url, client_id: "edge", client_secret: "s3cret", ...options }),
    { fetch: globalThis.fetch, now: () => clock.now, metrics },
  );
  return { introspector, clock, metrics };
}

const ACTIVE = { active: true, scope: "accounts", client_id: "PSDDE-BAFIN-123456" };

Deno.test("Introspector.claims() posts the form-encoded token with its hint, as JSON-accepting form", async () => {
  const token = "a b+c/=é&token=x";
  await using endpoint = endpointFor({ [token]: ACTIVE });
  const { introspector } = clocked(`${endpoint.url}/oauth/introspect`);
  assert.deepEqual(await introspector.claims(token), ACTIVE);
  const [request] = endpoint.received;
  assert.equal(request.method, "POST");
  assert.equal(request.path, "/oauth/introspect");
  assert.equal(request.headers.get("content-type"), "application/x-www-form-urlencoded");
  assert.equal(request.headers.get("accept"), "application/json");
  assert.equal(
    request.body,
    "token=a+b%2Bc%2F%3D%C3%A9%26token%3Dx&token_type_hint=access_token",
  );
  assert.equal(request.headers.get("authorization"), `Basic ${btoa("edge:s3cret")}`);
  assert.equal(introspector.requests, 1);
});

Deno.test("Introspector.claims() throws InactiveToken for an inactive token and keeps that answer negative_cache_ttl", async () => {
  await using endpoint = endpointFor({ good: ACTIVE });
  const { introspector, clock } = clocked(endpoint.url, { negative_cache_ttl: "10s" });
  await assert.rejects(() => introspector.claims("revoked"), {
    name: "Error",
    message: "The bearer token is not active",
  });
  await assert.rejects(() => introspector.claims("revoked"), InactiveToken);
  assert.equal(endpoint.received.length, 1);
  assert.deepEqual(await introspector.claims("good"), ACTIVE, "another token, another answer");
  assert.equal(endpoint.received.length, 2);
  clock.now += 9_999;
  await assert.rejects(() => introspector.claims("revoked"), InactiveToken);
  assert.equal(endpoint.received.length, 2);
  clock.now += 1;
  await assert.rejects(() => introspector.claims("revoked"), InactiveToken);
  assert.equal(endpoint.received.length, 3, "asked again once the 10 s are up");
});

Deno.test("Introspector.claims() keeps an active answer cache_ttl, never past the token's exp", async () => {
  const start = 1_700_000_000_000;
  await using endpoint = endpointFor({
    long: { ...ACTIVE, exp: start / 1000 + 3600 },
    short: { ...ACTIVE, exp: start / 1000 + 5 },
    "no-exp": ACTIVE,
  });
  const { introspector, clock } = clocked(endpoint.url, { cache_ttl: "20s" });
  for (const token of ["long", "short", "no-exp"]) await introspector.claims(token);
  assert.equal(endpoint.received.length, 3);
  clock.now = start + 4_999;
  for (const token of ["long", "short", "no-exp"]) await introspector.claims(token);
  assert.equal(endpoint.received.length, 3, "all three from the cache");
  clock.now = start + 5_000;
  await introspector.claims("short");
  assert.equal(endpoint.received.length, 4, "the short token's exp has come");
  await introspector.claims("long");
  await introspector.claims("no-exp");
  assert.equal(endpoint.received.length, 4);
  clock.now = start + 20_000;
  await introspector.claims("long");
  await introspector.claims("no-exp");
  assert.equal(endpoint.received.length, 6, "the TTL is up for both");
});

Deno.test("Introspector.claims() asks every time with cache_ttl 0s", async () => {
  await using endpoint = endpointFor({ t: ACTIVE });
  const { introspector } = clocked(endpoint.url, { cache_ttl: "0s" });
  for (let i = 0; i < 3; i++) await introspector.claims("t");
  assert.equal(endpoint.received.length, 3);
  assert.equal(introspector.requests, 3);
});

Deno.test("Introspector.claims() says why the endpoint gave no usable answer, and keeps none of them", async () => {
  await using endpoint = endpointFor({
    down: () => new Response("maintenance", { status: 503 }),
    html: () => new Response("<html>", { headers: { "content-type": "text/html" } }),
    "string-active": { active: "true" },
    "no-active": { scope: "accounts" },
    null: () => new Response("null", { headers: { "content-type": "application/json" } }),
    list: () => new Response("[true]", { headers: { "content-type": "application/json" } }),
  });
  const { introspector, metrics } = clocked(endpoint.url);
  const cases: [string, string][] = [
    ["down", "The introspection endpoint answered 503"],
    ["html", "The introspection endpoint answered no JSON"],
    ["string-active", 'The introspection answer has no boolean "active"'],
    ["no-active", 'The introspection answer has no boolean "active"'],
    ["null", 'The introspection answer has no boolean "active"'],
    ["list", 'The introspection answer has no boolean "active"'],
  ];
  for (const [token, message] of cases) {
    for (let i = 0; i < 2; i++) {
      await assert.rejects(() => introspector.claims(token), (error: Error) => {
        assert.ok(error instanceof IntrospectionUnavailable, String(error));
        assert.equal(error.message, message);
        return true;
      });
    }
  }
  assert.equal(endpoint.received.length, cases.length * 2, "no failure is kept");
  assert.equal(metrics.introspection.value({ outcome: "unavailable" }), cases.length * 2);
  const closed = clocked(`http://127.0.0.1:${closedPort()}/introspect`).introspector;
  await assert.rejects(() => closed.claims("t"), (error: Error) => {
    assert.ok(error instanceof IntrospectionUnavailable);
    assert.match(error.message, /^The introspection endpoint is unreachable: TypeError/);
    return true;
  });
});

Deno.test("Introspector.claims() gives up after the timeout", async () => {
  // The endpoint answers only once the call was given up.
  const held = Promise.withResolvers<void>();
  await using endpoint = endpointFor({ t: ACTIVE }, { hold: held.promise });
  const { introspector } = clocked(endpoint.url, { timeout: "100ms" });
  await assert.rejects(() => introspector.claims("t"), IntrospectionUnavailable)
    .finally(held.resolve);
});

Deno.test("Introspector.claims() counts active and inactive answers", async () => {
  await using endpoint = endpointFor({ t: ACTIVE });
  const { introspector, metrics } = clocked(endpoint.url, { cache_ttl: "0s" });
  await introspector.claims("t");
  await introspector.claims("t");
  await assert.rejects(() => introspector.claims("u"), InactiveToken);
  assert.equal(metrics.introspection.value({ outcome: "active" }), 2);
  assert.equal(metrics.introspection.value({ outcome: "inactive" }), 1);
  assert.equal(metrics.introspection.value({ outcome: "unavailable" }), 0);
});

Deno.test("Introspector.claims() authenticates with a private_key_jwt assertion for each request", async () => {
  const client = await generateKeyPair("ES256", { extractable: true });
  const pem = await exportPKCS8(client.privateKey);
  await using endpoint = endpointFor({ t: ACTIVE });
  const url = `${endpoint.url}/introspect`;
  for (const keyId of ["edge-1", undefined]) {
    const { introspector, clock } = clocked(url, {
      client_id: "edge client",
      client_secret: undefined,
      client_auth: "private_key_jwt",
      private_key: pem,
      key_algorithm: "ES256",
      key_id: keyId,
      cache_ttl: "0s",
    });
    const seen = endpoint.received.length;
    await introspector.claims("t");
    clock.now += 1_000;
    await introspector.claims("t");
    const ids: unknown[] = [];
    for (const [i, request] of endpoint.received.slice(seen).entries()) {
      assert.equal(request.headers.get("authorization"), null);
      const form = new URLSearchParams(request.body);
      assert.deepEqual([...form.keys()], [
        "token",
        "token_type_hint",
        "client_id",
        "client_assertion_type",
        "client_assertion",
      ]);
      assert.equal(form.get("client_id"), "edge client");
      assert.ok(request.body.includes("&client_id=edge+client&"));
      assert.equal(
        form.get("client_assertion_type"),
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      );
      const { payload, protectedHeader } = await jwtVerify(
        form.get("client_assertion")!,
        client.publicKey,
        { currentDate: new Date(clock.now) },
      );
      assert.deepEqual(protectedHeader, keyId ? { alg: "ES256", kid: keyId } : { alg: "ES256" });
      const iat = 1_700_000_000 + i;
      assert.deepEqual(
        {
          iss: payload.iss,
          sub: payload.sub,
          aud: payload.aud,
          iat: payload.iat,
          exp: payload.exp,
        },
        { iss: "edge client", sub: "edge client", aud: url, iat, exp: iat + 60 },
      );
      ids.push(payload.jti);
    }
    assert.equal(ids.length, 2);
    assert.ok(typeof ids[0] === "string" && ids[0] !== ids[1], "a new jti each time");
  }
});

Deno.test("introspectionProblems() names what client authentication lacks", async () => {
  const base = { url: "https://auth.example/introspect", client_id: "edge" };
  const problems = (options: Record<string, unknown>) =>
    introspectionProblems(introspectionOptions.parse({ ...base, ...options }));
  assert.deepEqual(problems({ client_secret: "s" }), []);
  assert.deepEqual(problems({}), ["introspection.client_secret: needed for client_auth basic"]);
  const jwt = { client_auth: "private_key_jwt" };
  assert.deepEqual(problems(jwt), [
    "introspection.private_key: needed for client_auth private_key_jwt",
  ]);
  const pem = await exportPKCS8((await generateKeyPair("RS256", { extractable: true })).privateKey);
  assert.deepEqual(problems({ ...jwt, private_key: pem }), []);
  assert.deepEqual(problems({ ...jwt, client_secret: "s", private_key: pem }), []);
  assert.deepEqual(
    problems({ ...jwt, private_key: pem.replaceAll("PRIVATE KEY", "RSA PRIVATE KEY") }),
    ["introspection.private_key: must be a PKCS#8 PEM private key"],
  );
  const file = await Deno.makeTempFile({ suffix: ".pem" });
  await Deno.writeTextFile(file, pem);
  assert.deepEqual(problems({ ...jwt, private_key: file }), []);
  await Deno.remove(file);
  const [missing, ...rest] = problems({ ...jwt, private_key: file });
  assert.match(missing, /^introspection\.private_key: cannot read file: No such file/);
  assert.deepEqual(rest, []);
});

Deno.test("introspector() makes one introspector per endpoint configuration and app", () => {
  const options = introspectionOptions.parse({
    url: "https://auth.example/introspect",
    client_id: "edge",
    client_secret: "s",
  });
  const app = { fetch: globalThis.fetch, now: Date.now };
  const one = introspector(options, app);
  assert.equal(introspector({ ...options }, app), one);
  assert.notEqual(introspector({ ...options, cache_ttl: 1 }, app), one);
  assert.notEqual(introspector(options, { ...app }), one);
});

Deno.test("looksLikeJwt() needs three base64url parts and a JSON object header with a string alg", () => {
  const b64url = (text: string) =>
    btoa(text).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
  // A header whose base64url has "-" and "_" (the "+" and "/" of base64).
  const header = b64url(JSON.stringify({ alg: "ES256", kid: "???~~~" }));
  assert.match(header, /-/);
  assert.match(header, /_/);
  assert.equal(looksLikeJwt(`${header}.e30.c2ln`), true);
  assert.equal(looksLikeJwt(`${header}.e30`), false, "two parts");
  assert.equal(looksLikeJwt(`${header}.e30.c2ln.c2ln`), false, "four parts");
  assert.equal(looksLikeJwt(`${header}..c2ln`), false, "an empty part");
  assert.equal(looksLikeJwt(`${header}.e30=.c2ln`), false, "padding");
  assert.equal(looksLikeJwt(`${header}.e3+0.c2ln`), false, "base64, not base64url");
  assert.equal(looksLikeJwt(`${header}.e30.c2l n`), false, "a space in the signature");
  assert.equal(looksLikeJwt(`${b64url("null")}.e30.c2ln`), false, "a null header");
  assert.equal(looksLikeJwt(`${b64url('"RS256"')}.e30.c2ln`), false, "a string header");
  assert.equal(looksLikeJwt(`${b64url('{"alg":256}')}.e30.c2ln`), false, "alg not a string");
});

Deno.test("Introspector.claims() keeps no answer that is already stale (it would push out a fresh one)", async () => {
  const start = 1_700_000_000_000;
  await using endpoint = endpointFor({
    fresh: ACTIVE,
    "expiring-now": { ...ACTIVE, exp: start / 1000 },
  });
  const { introspector } = clocked(endpoint.url, { cache_size: 1 });
  await introspector.claims("fresh");
  await introspector.claims("expiring-now");
  await introspector.claims("fresh");
  assert.equal(endpoint.received.length, 2, "the fresh answer stayed in the one place");
});

Deno.test("Introspector.claims() throws IntrospectionUnavailable without metrics too, for an answer without a body", async () => {
  await using endpoint = startUpstream(() => new Response(null, { status: 304 }));
  const introspector = new Introspector(
    introspectionOptions.parse({ url: endpoint.url, client_id: "edge", client_secret: "s" }),
    { fetch: globalThis.fetch, now: Date.now },
  );
  await assert.rejects(() => introspector.claims("t"), {
    name: "Error",
    message: "The introspection endpoint answered 304",
  });
  await assert.rejects(() => introspector.claims("t"), IntrospectionUnavailable);
});

Deno.test("introspectionOptions bounds its cache lifetimes and timeout", () => {
  const base = { url: "https://auth.example/introspect", client_id: "edge", client_secret: "s" };
  const problem = (options: Record<string, unknown>) => {
    const result = introspectionOptions.safeParse({ ...base, ...options });
    return result.success ? undefined : result.error.issues.map((i) => i.message).join("; ");
  };
  assert.equal(problem({ cache_ttl: "0s", negative_cache_ttl: "0s", timeout: "24d" }), undefined);
  assert.equal(problem({ cache_ttl: "1h", negative_cache_ttl: "5m" }), undefined);
  assert.equal(problem({ cache_ttl: "61m" }), 'must be at most 1h, got "61m"');
  assert.equal(problem({ negative_cache_ttl: "301s" }), 'must be at most 5m, got "301s"');
  assert.equal(problem({ timeout: "25d" }), 'must be at most 24d, got "25d"');
});

Deno.test("Introspector.health() takes a token's answer younger than recentMs, and probes at recentMs", async () => {
  await using endpoint = endpointFor({ t: ACTIVE });
  const { introspector, clock } = clocked(endpoint.url);
  await introspector.claims("t");
  clock.now += 999;
  assert.deepEqual(await introspector.health(1000), { source: endpoint.url, state: "up" });
  assert.equal(endpoint.received.length, 1, "the answer a millisecond younger stands");
  clock.now += 1;
  assert.deepEqual(await introspector.health(1000), { source: endpoint.url, state: "up" });
  assert.equal(endpoint.received.length, 2, "at recentMs: a probe");
  assert.match(new URLSearchParams(endpoint.received[1].body).get("token")!, /^readyz-/);
});
