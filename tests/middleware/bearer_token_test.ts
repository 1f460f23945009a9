import assert from "node:assert/strict";
import {
  exportJWK,
  exportPKCS8,
  generateKeyPair,
  type JWK,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from "jose";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { closedPort, startUpstream } from "../support/upstream.ts";
import { checkoutOrderBody } from "../support/requests.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";
import { createCa, issue, nginxHeader } from "../support/pki.ts";
import { bearerToken } from "../../middleware/bearer_token.ts";

const ISSUER = "https://auth.bank.example";
const first = await generateKeyPair("RS256");
const second = await generateKeyPair("ES256");
const jwk = async (key: CryptoKey, kid: string, alg: string): Promise<JWK> => ({
  ...await exportJWK(key),
  kid,
  alg,
  use: "sig",
});
const k1 = await jwk(first.publicKey, "k1", "RS256");
const k2 = await jwk(second.publicKey, "k2", "ES256");

/** A JWKS endpoint whose keys the test can rotate; counts fetches. */
function jwksServer(keys: JWK[]) {
  const state = { keys, fetches: 0 };
  const server = startUpstream(() => {
    state.fetches++;
    return Response.json({ keys: state.keys });
  });
  return { state, server, url: `${server.url}/jwks.json` };
}

type BearerOptions = NonNullable<LevelInput["bearer_token"]>;

/** A policy with bearer tokens enforced (these options over the test's own), scopes for ais. */
function policy(bearer: BearerOptions = {}) {
  return buildPolicy({
    defaults: {
      bearer_token: {
        mode: "enforce",
        jwks_url: "${JWKS_URL}",
        issuer: ISSUER,
        audience: ["xs2a"],
        refetch_interval: "60s",
        ...bearer,
      },
    },
    groups: { ais: { bearer_token: { scopes: ["accounts"] } } },
  });
}

async function token(
  claims: JWTPayload = {},
  options: { kid?: string; key?: CryptoKey; alg?: string; exp?: number } = {},
) {
  return await new SignJWT({
    iss: ISSUER,
    aud: "xs2a",
    scope: "accounts payments",
    client_id: "PSDGE-NBG-123456",
    sub: "PSU-1",
    exp: options.exp ?? Math.floor(Date.now() / 1000) + 300,
    ...claims,
  })
    .setProtectedHeader({ alg: options.alg ?? "RS256", kid: options.kid ?? "k1" })
    .setIssuedAt()
    .sign(options.key ?? first.privateKey);
}

/** Requests that pass every request-hardening rule, so that the token decides. */
const CHECKOUT = {
  path: "/api/v1/checkout/orders",
  init: {
    method: "POST",
    body: JSON.stringify(checkoutOrderBody()),
    headers: { "content-type": "application/json" },
  },
};
/** The installment calculator requires Content-Type even without a body (document 001). */
const INSTALLMENT = {
  path: "/v1/services/installment/calculate?amount=100.00&client_id=m1",
  init: { headers: { "content-type": "application/json" } },
};
const ACCOUNTS = { path: "/v1/accounts", init: { headers: { "consent-id": "c-1" } } };

interface Setup {
  policy?: PolicyInput;
  jwks?: ReturnType<typeof jwksServer>;
}

async function withGateway<T>(
  setup: Setup,
  body: (
    call: (
      request: { path: string; init: RequestInit },
      headers?: Record<string, string>,
    ) => Promise<
      {
        response: Response;
        json: { tppMessages?: { code: string; text: string; path?: string }[] };
      }
    >,
    context: { reached: () => number; log: Record<string, unknown>[] },
  ) => Promise<T>,
): Promise<T> {
  const jwks = setup.jwks ?? jwksServer([k1, k2]);
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: setup.policy ?? policy(),
    upstream: upstream.url,
    env: { JWKS_URL: jwks.url },
  });
  try {
    return await body(async (request, headers = {}) => {
      const response = await gateway.fetch(request.path, {
        ...request.init,
        headers: { "x-request-id": crypto.randomUUID(), ...request.init.headers, ...headers },
      });
      return { response, json: await response.json() };
    }, { reached: () => upstream.received.length, log: gateway.log.lines });
  } finally {
    if (!setup.jwks) await jwks.server.close();
  }
}

function assertRejected(
  result: { response: Response; json: { tppMessages?: { code: string; text: string }[] } },
  code: string,
  text?: RegExp,
) {
  assert.equal(result.response.status, 401, JSON.stringify(result.json));
  assert.equal(result.json.tppMessages![0].code, code, result.json.tppMessages![0].text);
  if (text) assert.match(result.json.tppMessages![0].text, text);
  assert.match(result.response.headers.get("www-authenticate") ?? "", /^Bearer realm="xs2a-edge"/);
}

Deno.test("bearerToken() requires a token on the checkout order, with a WWW-Authenticate challenge", async () => {
  await withGateway({}, async (call, { reached }) => {
    const missing = await call(CHECKOUT);
    assertRejected(missing, "TOKEN_UNKNOWN", /must carry a bearer token/);
    assert.equal(missing.response.headers.get("www-authenticate"), 'Bearer realm="xs2a-edge"');
    assert.equal(reached(), 0);
    const ok = await call(CHECKOUT, { authorization: `Bearer ${await token()}` });
    assert.equal(ok.response.status, 200);
    assert.equal(reached(), 1);
  });
});

Deno.test("bearerToken() requires a token on the installment calculator but not on products", async () => {
  await withGateway({}, async (call, { reached }) => {
    assertRejected(await call(INSTALLMENT), "TOKEN_UNKNOWN");
    assert.equal((await call({ path: "/v1/products/en", init: {} })).response.status, 200);
    // Where a token is optional, one that is sent is still checked.
    const before = reached();
    assertRejected(
      await call({ path: "/v1/products/en", init: {} }, { authorization: "Bearer a b" }),
      "TOKEN_UNKNOWN",
      /must look like Bearer <JWT>/,
    );
    assertRejected(
      await call({ path: "/v1/products/en", init: {} }, { authorization: "Bearer x.y.z" }),
      "TOKEN_UNKNOWN",
    );
    assert.equal(reached(), before);
    assert.equal(
      (await call({ path: "/v1/products/en", init: {} }, { authorization: "Basic dTpw" })).response
        .status,
      200,
    );
  });
});

Deno.test("bearerToken() answers TOKEN_EXPIRED for an expired token, within the leeway it passes", async () => {
  await withGateway({}, async (call) => {
    const old = await token({}, { exp: Math.floor(Date.now() / 1000) - 120 });
    const expired = await call(CHECKOUT, { authorization: `Bearer ${old}` });
    assertRejected(expired, "TOKEN_EXPIRED", /has expired/);
    assert.match(expired.response.headers.get("www-authenticate")!, /error="invalid_token"/);
    const recent = await token({}, { exp: Math.floor(Date.now() / 1000) - 10 });
    assert.equal(
      (await call(CHECKOUT, { authorization: `Bearer ${recent}` })).response.status,
      200,
    );
  });
});

Deno.test("bearerToken() rejects another issuer (TOKEN_UNKNOWN) and another audience (TOKEN_INVALID)", async () => {
  await withGateway({}, async (call) => {
    assertRejected(
      await call(CHECKOUT, {
        authorization: `Bearer ${await token({ iss: "https://evil.example" })}`,
      }),
      "TOKEN_UNKNOWN",
      /not issued by the bank/,
    );
    assertRejected(
      await call(CHECKOUT, { authorization: `Bearer ${await token({ aud: "other-api" })}` }),
      "TOKEN_INVALID",
      /"aud" claim/,
    );
  });
});

Deno.test("bearerToken() rejects alg none, HMAC and a tampered token", async () => {
  await withGateway({}, async (call) => {
    const good = await token();
    const [, payload] = good.split(".");
    const none = `${btoa('{"alg":"none","kid":"k1"}').replace(/=+$/, "")}.${payload}.`;
    assertRejected(await call(CHECKOUT, { authorization: `Bearer ${none}` }), "TOKEN_UNKNOWN");
    const secret = new TextEncoder().encode(JSON.stringify(k1));
    const hmac = await new SignJWT({ client_id: "x" }).setProtectedHeader({
      alg: "HS256",
      kid: "k1",
    })
      .setIssuer(ISSUER).setAudience("xs2a").setExpirationTime("5m").sign(secret);
    assertRejected(
      await call(CHECKOUT, { authorization: `Bearer ${hmac}` }),
      "TOKEN_UNKNOWN",
      /algorithm is not allowed/,
    );
    const [head, , sig] = good.split(".");
    const forged = btoa(
      JSON.stringify({ iss: ISSUER, aud: "xs2a", exp: 9999999999, scope: "accounts" }),
    )
      .replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
    assertRejected(
      await call(CHECKOUT, { authorization: `Bearer ${head}.${forged}.${sig}` }),
      "TOKEN_UNKNOWN",
      /signature does not verify/,
    );
    assertRejected(
      await call(CHECKOUT, { authorization: "Bearer not-a-jwt" }),
      "TOKEN_UNKNOWN",
      /well-formed/,
    );
  });
});

Deno.test("bearerToken() requires the group's scopes", async () => {
  await withGateway({}, async (call) => {
    const narrow = await token({ scope: "payments" });
    const result = await call(ACCOUNTS, { authorization: `Bearer ${narrow}` });
    assertRejected(result, "TOKEN_INVALID", /lacks the scope accounts/);
    assert.match(
      result.response.headers.get("www-authenticate")!,
      /error="insufficient_scope", .*scope="accounts"/,
    );
    assert.equal(
      (await call(ACCOUNTS, {
        authorization: `Bearer ${await token({ scope: ["accounts", "payments"] })}`,
      })).response.status,
      200,
    );
  });
});

Deno.test("bearerToken() refetches the JWKS on an unknown kid at most once per interval", async () => {
  const jwks = jwksServer([k1]);
  try {
    const fast = policy({ refetch_interval: "1s" });
    await withGateway({ jwks, policy: fast }, async (call) => {
      assert.equal(
        (await call(CHECKOUT, { authorization: `Bearer ${await token()}` })).response.status,
        200,
      );
      assert.equal(jwks.state.fetches, 1);
      jwks.state.keys = [k1, k2];
      const rotated = await token({}, { kid: "k2", key: second.privateKey, alg: "ES256" });
      // Inside the interval: no new fetch, the key stays unknown.
      assertRejected(
        await call(CHECKOUT, { authorization: `Bearer ${rotated}` }),
        "TOKEN_UNKNOWN",
        /key is not known/,
      );
      assert.equal(jwks.state.fetches, 1);
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal(
        (await call(CHECKOUT, { authorization: `Bearer ${rotated}` })).response.status,
        200,
      );
      assert.equal(jwks.state.fetches, 2);
      const unknown = await token({}, { kid: "k9" });
      for (let i = 0; i < 3; i++) {
        assertRejected(
          await call(CHECKOUT, { authorization: `Bearer ${unknown}` }),
          "TOKEN_UNKNOWN",
        );
      }
      assert.equal(jwks.state.fetches, 2);
    });
  } finally {
    await jwks.server.close();
  }
});

Deno.test("bearerToken() checks PSU-ID against a claim when the policy says so", async () => {
  const strict = policy({ psu_id_claim: "sub" });
  await withGateway({ policy: strict }, async (call) => {
    const bearer = { authorization: `Bearer ${await token({ sub: "PSU-1" })}` };
    assert.equal((await call(CHECKOUT, { ...bearer, "psu-id": "PSU-1" })).response.status, 200);
    const other = await call(CHECKOUT, { ...bearer, "psu-id": "PSU-2" });
    assertRejected(
      other,
      "PSU_CREDENTIALS_INVALID",
      /"PSU-ID" must match the bearer token's "sub" claim/,
    );
    assert.equal(other.json.tppMessages![0].path, "PSU-ID");
  });
});

Deno.test("bearerToken() identifies the TPP by the token's client id when no certificate did", async () => {
  await withGateway({}, async (call, { log }) => {
    await call(CHECKOUT, { authorization: `Bearer ${await token({ client_id: "shop-77" })}` });
    assert.equal(log.find((l) => l.op === "createCheckoutOrder")?.tpp, "shop-77");
  });
});

Deno.test("bearerToken() reads a JWKS file; a missing file is a policy error naming it", async () => {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(file, JSON.stringify({ keys: [k1] }));
    const fromFile = policy({ jwks_url: undefined, jwks_file: file });
    await withGateway({ policy: fromFile }, async (call) => {
      assert.equal(
        (await call(CHECKOUT, { authorization: `Bearer ${await token()}` })).response.status,
        200,
      );
    });
    const missing = policy({ jwks_url: undefined, jwks_file: "/nonexistent/jwks.json" });
    await assert.rejects(
      () => startGateway({ policy: missing, upstream: "http://127.0.0.1:9" }),
      // The file is named once for all the operations that share it (defaults level).
      /bearer_token for every operation: jwks_file: cannot read "\/nonexistent\/jwks\.json"/,
    );
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("bearerToken() answers 503, not an authentication error, when the JWKS cannot be fetched", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy(),
    upstream: upstream.url,
    env: { JWKS_URL: `http://127.0.0.1:${closedPort()}/jwks.json` },
  });
  const response = await gateway.fetch(CHECKOUT.path, {
    ...CHECKOUT.init,
    headers: { ...CHECKOUT.init.headers, authorization: `Bearer ${await token()}` },
  });
  assert.equal(response.status, 503);
  assert.equal((await response.json()).tppMessages[0].code, "UPSTREAM_UNAVAILABLE");
  assert.equal(upstream.received.length, 0);
});

Deno.test("bearerToken() refuses a certificate-bound token on a request without a certificate", async () => {
  await withGateway({}, async (call, { reached }) => {
    const bound = await token({ cnf: { "x5t#S256": "bm90LWEtcmVhbC10aHVtYnByaW50" } });
    const result = await call(CHECKOUT, { authorization: `Bearer ${bound}` });
    assertRejected(result, "TOKEN_INVALID", /bound to a certificate .* the request carries none/);
    assert.equal(reached(), 0);
    // A confirmation the gateway cannot check is no binding it may ignore.
    const other = await token({ cnf: { jkt: "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I" } });
    const dpop = await call(CHECKOUT, { authorization: `Bearer ${other}` });
    assertRejected(dpop, "TOKEN_INVALID", /"cnf\.jkt" cannot be checked here/);
    assert.equal(reached(), 0);
  });
});

Deno.test("bearerToken() refuses a token without exp", async () => {
  await withGateway({}, async (call, { reached }) => {
    const forever = await new SignJWT({ iss: ISSUER, aud: "xs2a", client_id: "PSDGE-NBG-123456" })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .sign(first.privateKey);
    const result = await call(CHECKOUT, { authorization: `Bearer ${forever}` });
    assertRejected(result, "TOKEN_INVALID", /must carry the "exp" claim/);
    assert.equal(reached(), 0);
  });
});

// Opaque tokens: RFC 7662 introspection against a real endpoint on 127.0.0.1.

/** The authorisation server's introspection endpoint: answers per token, records each request. */
function introspectionServer(
  answers: Record<string, Record<string, unknown>>,
  options: { status?: number; check?: (form: URLSearchParams, request: Request) => void } = {},
) {
  return startUpstream(async (request, recorded) => {
    const form = new URLSearchParams(recorded.body);
    await options.check?.(form, request);
    if (options.status) return new Response("down", { status: options.status });
    return Response.json(answers[form.get("token") ?? ""] ?? { active: false });
  });
}

const SECRET_AUTH = `Basic ${btoa("xs2a-edge:s3cret")}`;

type Introspection = NonNullable<BearerOptions["introspection"]>;

/** A policy with token introspection at `url` (these options over the test's own). */
function introspectionPolicy(
  url: string,
  introspection: Partial<Introspection> = {},
  verification: BearerOptions["verification"] = "introspection",
  bearer: BearerOptions = {},
) {
  return buildPolicy({
    defaults: {
      bearer_token: {
        mode: "enforce",
        verification,
        jwks_url: "${JWKS_URL}",
        issuer: ISSUER,
        introspection: { url, client_id: "xs2a-edge", client_secret: "s3cret", ...introspection },
        ...bearer,
      },
    },
    groups: { ais: { bearer_token: { scopes: ["accounts"] } } },
  });
}

async function introspected(
  policy: PolicyInput,
  tokens: string[],
  options: { request?: typeof ACCOUNTS; now?: () => number } = {},
) {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy,
    upstream: upstream.url,
    env: { JWKS_URL: `http://127.0.0.1:${closedPort()}/jwks.json` },
    services: options.now ? { now: options.now } : {},
  });
  const request = options.request ?? ACCOUNTS;
  const answers = [];
  for (const t of tokens) {
    const response = await gateway.fetch(request.path, {
      ...request.init,
      headers: {
        ...request.init.headers,
        "x-request-id": crypto.randomUUID(),
        authorization: `Bearer ${t}`,
      },
    });
    answers.push({
      status: response.status,
      body: await response.json(),
      headers: response.headers,
    });
  }
  return { answers, upstream: upstream.received, log: gateway.log.lines };
}

const ACTIVE = {
  active: true,
  scope: "accounts payments",
  client_id: "PSDGE-NBG-123456",
  iss: ISSUER,
  exp: Math.floor(Date.now() / 1000) + 3600,
};

Deno.test("bearerToken() introspects an opaque token once and reuses the active answer", async () => {
  await using endpoint = introspectionServer({ "opaque-1": ACTIVE }, {
    check: (form, request) => {
      assert.equal(request.headers.get("authorization"), SECRET_AUTH);
      assert.equal(request.headers.get("content-type"), "application/x-www-form-urlencoded");
      assert.equal(form.get("token_type_hint"), "access_token");
    },
  });
  const { answers, upstream, log } = await introspected(introspectionPolicy(endpoint.url), [
    "opaque-1",
    "opaque-1",
    "opaque-1",
  ]);
  assert.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
  assert.equal(upstream.length, 3);
  assert.equal(endpoint.received.length, 1, "the active answer was not reused");
  assert.equal(endpoint.received[0].body.includes("token=opaque-1"), true);
  assert.equal(log.find((l) => l.op === "getAccountList")?.tpp, "PSDGE-NBG-123456");
});

Deno.test("bearerToken() refuses an inactive token with 401 TOKEN_INVALID and caches the answer briefly", async () => {
  await using endpoint = introspectionServer({});
  let now = Date.now();
  const { answers, upstream } = await introspected(
    introspectionPolicy(endpoint.url, { negative_cache_ttl: "10s" }),
    ["revoked-token", "revoked-token"],
    { now: () => now },
  );
  assert.equal(answers[0].status, 401);
  assert.equal(answers[0].body.tppMessages[0].code, "TOKEN_INVALID");
  assert.match(answers[0].body.tppMessages[0].text, /not active/);
  assert.match(answers[0].headers.get("www-authenticate")!, /error="invalid_token"/);
  assert.equal(answers[1].status, 401);
  assert.equal(upstream.length, 0);
  assert.equal(endpoint.received.length, 1, "the inactive answer was not reused");
  now += 11_000;
  const later = await introspected(introspectionPolicy(endpoint.url), ["revoked-token"], {
    now: () => now,
  });
  assert.equal(later.answers[0].status, 401);
  assert.equal(endpoint.received.length, 2);
});

Deno.test("bearerToken() asks again once the policy's TTL or the token's exp has passed", async () => {
  const exp = Math.floor(Date.now() / 1000) + 60;
  await using endpoint = introspectionServer({ "short-lived": { ...ACTIVE, exp } });
  let now = Date.now();
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: introspectionPolicy(endpoint.url, { cache_ttl: "20s" }),
    upstream: upstream.url,
    env: { JWKS_URL: `http://127.0.0.1:${closedPort()}/jwks.json` },
    services: { now: () => now },
  });
  const send = async () =>
    (await gateway.fetch(ACCOUNTS.path, {
      headers: {
        ...ACCOUNTS.init.headers,
        "x-request-id": crypto.randomUUID(),
        authorization: "Bearer short-lived",
      },
    })).status;
  assert.equal(await send(), 200);
  now += 10_000;
  assert.equal(await send(), 200);
  assert.equal(endpoint.received.length, 1);
  now += 15_000; // past the 20 s TTL
  assert.equal(await send(), 200);
  assert.equal(endpoint.received.length, 2);
  now = exp * 1000 + 31_000; // past exp (and the 30 s leeway): the cache holds no longer
  const status = await send();
  assert.equal(endpoint.received.length, 3);
  assert.equal(status, 401, "the endpoint's answer with a past exp was accepted");
});

Deno.test("bearerToken() checks an introspected token's scopes, issuer and audience as a JWT's", async () => {
  await using endpoint = introspectionServer({
    "payments-only": { ...ACTIVE, scope: "payments" },
    "other-issuer": { ...ACTIVE, iss: "https://evil.example" },
    "no-aud": ACTIVE,
  });
  const { answers, upstream } = await introspected(introspectionPolicy(endpoint.url), [
    "payments-only",
    "other-issuer",
  ]);
  assert.equal(answers[0].body.tppMessages[0].code, "TOKEN_INVALID");
  assert.match(answers[0].body.tppMessages[0].text, /lacks the scope accounts/);
  assert.equal(answers[1].body.tppMessages[0].code, "TOKEN_UNKNOWN");
  assert.equal(upstream.length, 0);
  const withAudience = introspectionPolicy(endpoint.url, {}, "introspection", {
    audience: ["xs2a"],
  });
  const aud = await introspected(withAudience, ["no-aud"]);
  assert.equal(aud.answers[0].body.tppMessages[0].code, "TOKEN_INVALID");
  assert.match(aud.answers[0].body.tppMessages[0].text, /"aud"/);
});

Deno.test("bearerToken() answers 503 when the introspection endpoint is down or failing, never an auth error", async () => {
  await using failing = introspectionServer({}, { status: 500 });
  for (const url of [`http://127.0.0.1:${closedPort()}/introspect`, failing.url]) {
    const { answers, upstream, log } = await introspected(introspectionPolicy(url), ["opaque-1"]);
    assert.equal(answers[0].status, 503);
    assert.equal(answers[0].body.tppMessages[0].code, "UPSTREAM_UNAVAILABLE");
    assert.ok(Number(answers[0].headers.get("retry-after")) >= 1);
    assert.equal(upstream.length, 0);
    assert.ok(log.some((l) => l.msg === "token introspection unavailable"));
  }
});

Deno.test("bearerToken() verification auto: JWTs against the JWKS, other tokens by introspection", async () => {
  const { url, server } = jwksServer([k1]);
  await using _jwks = server;
  await using endpoint = introspectionServer({ "opaque-1": { ...ACTIVE, aud: "xs2a" } });
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: introspectionPolicy(endpoint.url, {}, "auto"),
    upstream: upstream.url,
    env: { JWKS_URL: url },
  });
  for (const t of [await token(), "opaque-1"]) {
    const response = await gateway.fetch(ACCOUNTS.path, {
      headers: {
        ...ACCOUNTS.init.headers,
        "x-request-id": crypto.randomUUID(),
        authorization: `Bearer ${t}`,
      },
    });
    assert.equal(response.status, 200, await response.text());
  }
  assert.equal(endpoint.received.length, 1, "the JWT was introspected");
});

Deno.test("bearerToken() authenticates to the introspection endpoint with private_key_jwt", async () => {
  const client = await generateKeyPair("RS256", { extractable: true });
  const pem = await exportPKCS8(client.privateKey);
  let assertion: JWTPayload | undefined;
  await using endpoint = introspectionServer({ "opaque-1": ACTIVE }, {
    check: async (form, request) => {
      assert.equal(request.headers.get("authorization"), null);
      assert.equal(
        form.get("client_assertion_type"),
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      );
      ({ payload: assertion } = await jwtVerify(form.get("client_assertion")!, client.publicKey));
    },
  });
  const { answers } = await introspected(
    introspectionPolicy(endpoint.url, {
      client_secret: undefined,
      client_auth: "private_key_jwt",
      private_key: pem,
      key_id: "edge-1",
    }),
    ["opaque-1"],
  );
  assert.equal(answers[0].status, 200, JSON.stringify(answers[0].body));
  assert.equal(assertion?.iss, "xs2a-edge");
  assert.equal(assertion?.sub, "xs2a-edge");
  assert.equal(assertion?.aud, endpoint.url);
  assert.ok(typeof assertion?.jti === "string" && typeof assertion?.exp === "number");
});

Deno.test("bearerToken() refuses a policy with introspection but no endpoint or credentials", async () => {
  await assert.rejects(
    () =>
      startGateway({
        policy: introspectionPolicy("http://127.0.0.1:9/i", {}, "introspection", {
          introspection: undefined,
        }),
        upstream: "http://127.0.0.1:9",
        env: { JWKS_URL: "http://127.0.0.1:9/jwks.json" },
      }),
    /introspection: needed for verification introspection/,
  );
  await assert.rejects(
    () =>
      startGateway({
        policy: introspectionPolicy("http://127.0.0.1:9/i", { client_secret: undefined }),
        upstream: "http://127.0.0.1:9",
        env: { JWKS_URL: "http://127.0.0.1:9/jwks.json" },
      }),
    /introspection\.client_secret: needed for client_auth basic/,
  );
});

// Rules pinned by mutation testing (issue 25).

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/=+$/, "").replace(/\+/g, "-")
    .replace(/\//g, "_");
}

/** A compact JWS signed with the first (RS256) key, header and payload as given. */
async function signedByHand(header: Record<string, unknown>, payload: string): Promise<string> {
  const encoder = new TextEncoder();
  const input = `${base64url(encoder.encode(JSON.stringify(header)))}.${
    base64url(encoder.encode(payload))
  }`;
  const signature = await crypto.subtle.sign(
    "RSASSA-PKCS1-v1_5",
    first.privateKey,
    encoder.encode(input),
  );
  return `${input}.${base64url(new Uint8Array(signature))}`;
}

Deno.test("bearerToken() quotes the realm and the error text in its WWW-Authenticate challenges", async () => {
  const realm = 'bank "edge" \\ 1';
  await withGateway({ policy: policy({ realm }) }, async (call) => {
    const challenge = async (
      request: { path: string; init: RequestInit },
      authorization?: string,
    ) =>
      (await call(request, authorization ? { authorization } : {})).response.headers.get(
        "www-authenticate",
      );
    const quotedRealm = `Bearer realm="bank 'edge' ' 1"`;
    assert.equal(await challenge(CHECKOUT), quotedRealm);
    assert.equal(
      await challenge(CHECKOUT, "Bearer"),
      `${quotedRealm}, error="invalid_request", ` +
        `error_description="Header 'Authorization' must look like Bearer <JWT>"`,
    );
    assert.equal(
      await challenge(ACCOUNTS, `Bearer ${await token({ scope: "payments" })}`),
      `${quotedRealm}, error="insufficient_scope", ` +
        `error_description="The bearer token lacks the scope accounts this operation needs", ` +
        `scope="accounts"`,
    );
    assert.equal(
      await challenge(CHECKOUT, `Bearer ${await token({ iss: "https://evil.example" })}`),
      `${quotedRealm}, error="invalid_token", ` +
        `error_description="The bearer token was not issued by the bank's authorisation server"`,
    );
  });
});

Deno.test("bearerToken() takes the Bearer scheme in any case and spacing, a token with padding as a token", async () => {
  await withGateway({}, async (call, { reached }) => {
    const jwt = await token();
    for (const authorization of [`bearer ${jwt}`, `BEARER   ${jwt}`]) {
      assert.equal((await call(CHECKOUT, { authorization })).response.status, 200, authorization);
    }
    assert.equal(reached(), 2);
    // Padding is token68 syntax: the token is checked (and is no JWT), not refused as a header.
    assertRejected(
      await call(CHECKOUT, { authorization: "Bearer abc==" }),
      "TOKEN_UNKNOWN",
      /well-formed/,
    );
    assertRejected(
      await call(CHECKOUT, { authorization: "Bearer a=b" }),
      "TOKEN_UNKNOWN",
      /must look like/,
    );
    assertRejected(
      await call(CHECKOUT, { authorization: "Bearer" }),
      "TOKEN_UNKNOWN",
      /must look like/,
    );
    // Another scheme that starts with the same letters is another scheme.
    const products = { path: "/v1/products/en", init: {} };
    assert.equal((await call(products, { authorization: "Bearerish abc" })).response.status, 200);
    const refused = await call(CHECKOUT, { authorization: "Bearerish abc" });
    assertRejected(refused, "TOKEN_UNKNOWN", /must carry a bearer token/);
    assert.equal(refused.response.headers.get("www-authenticate"), 'Bearer realm="xs2a-edge"');
    assert.equal(reached(), 3);
  });
});

Deno.test("bearerToken() reads scopes from a spaced string or a list, in the claim the policy names", async () => {
  await withGateway({}, async (call) => {
    for (const scope of ["payments  accounts ", ["accounts", 7, null]]) {
      const result = await call(ACCOUNTS, { authorization: `Bearer ${await token({ scope })}` });
      assert.equal(result.response.status, 200, JSON.stringify(scope));
    }
    for (const scope of [["payments", 7], "accountsx", 42, { accounts: true }]) {
      const result = await call(ACCOUNTS, { authorization: `Bearer ${await token({ scope })}` });
      assertRejected(result, "TOKEN_INVALID", /lacks the scope accounts/);
    }
  });
  const scp = buildPolicy(policy({ scope_claim: "scp" }), {
    groups: { ais: { bearer_token: { scopes: ["accounts", "balances", "transactions"] } } },
  });
  await withGateway({ policy: scp }, async (call) => {
    const both = await call(ACCOUNTS, {
      authorization: `Bearer ${await token({ scope: "", scp: "accounts transactions balances" })}`,
    });
    assert.equal(both.response.status, 200);
    const narrow = await call(ACCOUNTS, {
      authorization: `Bearer ${await token({ scope: "balances transactions", scp: "accounts" })}`,
    });
    assertRejected(narrow, "TOKEN_INVALID", /lacks the scope balances, transactions this/);
    assert.match(
      narrow.response.headers.get("www-authenticate")!,
      /scope="accounts balances transactions"$/,
    );
  });
});

Deno.test("bearerToken() names a missing or wrong claim of a JWT", async () => {
  await withGateway({}, async (call, { reached }) => {
    const noIssuer = await token({ iss: undefined });
    assertRejected(
      await call(CHECKOUT, { authorization: `Bearer ${noIssuer}` }),
      "TOKEN_UNKNOWN",
      /^The bearer token was not issued by the bank's authorisation server$/,
    );
    const noAudience = await token({ aud: undefined });
    assertRejected(
      await call(CHECKOUT, { authorization: `Bearer ${noAudience}` }),
      "TOKEN_INVALID",
      /^The bearer token must carry the "aud" claim$/,
    );
    const early = await token({ nbf: Math.floor(Date.now() / 1000) + 120 });
    assertRejected(
      await call(CHECKOUT, { authorization: `Bearer ${early}` }),
      "TOKEN_INVALID",
      /^The bearer token's "nbf" claim is not valid here: .*nbf/,
    );
    assertRejected(
      await call(CHECKOUT, { authorization: `Bearer ${await token({ aud: "other" })}` }),
      "TOKEN_INVALID",
      /^The bearer token's "aud" claim is not valid here: /,
    );
    assert.equal(reached(), 0);
  });
});

Deno.test("bearerToken() applies the policy's leeway and algorithms", async () => {
  const strict = policy({ leeway: "0s", algorithms: ["ES256"] });
  await withGateway({ policy: strict }, async (call) => {
    const es = { kid: "k2", key: second.privateKey, alg: "ES256" };
    const recent = await token({}, { ...es, exp: Math.floor(Date.now() / 1000) - 5 });
    assertRejected(
      await call(CHECKOUT, { authorization: `Bearer ${recent}` }),
      "TOKEN_EXPIRED",
      /^The bearer token has expired$/,
    );
    assertRejected(
      await call(CHECKOUT, { authorization: `Bearer ${await token()}` }),
      "TOKEN_UNKNOWN",
      /^The bearer token's algorithm is not allowed$/,
    );
    assert.equal(
      (await call(CHECKOUT, { authorization: `Bearer ${await token({}, es)}` })).response.status,
      200,
    );
  });
});

Deno.test("bearerToken() refuses a token with a critical header it does not know as a token, not a 503", async () => {
  await withGateway({}, async (call) => {
    // Signed by hand: jose refuses to sign with a critical header it does not know either.
    const critical = await signedByHand(
      { alg: "RS256", kid: "k1", crit: ["urn:bank:hop"], "urn:bank:hop": 1 },
      JSON.stringify({ iss: ISSUER, aud: "xs2a", exp: Math.floor(Date.now() / 1000) + 300 }),
    );
    assertRejected(
      await call(CHECKOUT, { authorization: `Bearer ${critical}` }),
      "TOKEN_UNKNOWN",
      /^The bearer token is not a well-formed signed JWT$/,
    );
  });
});

Deno.test("bearerToken() checks a JWT's dates on the app's clock", async () => {
  const jwks = jwksServer([k1]);
  await using _jwks = jwks.server;
  await using upstream = startUpstream();
  const hourAgo = Date.now() - 3_600_000;
  await using gateway = await startGateway({
    policy: policy(),
    upstream: upstream.url,
    env: { JWKS_URL: jwks.url },
    services: { now: () => hourAgo },
  });
  // Expired an hour ago by the machine's clock, valid on the app's.
  const old = await token({ iat: Math.floor(hourAgo / 1000) }, {
    exp: Math.floor(hourAgo / 1000) + 60,
  });
  const response = await gateway.fetch(CHECKOUT.path, {
    ...CHECKOUT.init,
    headers: {
      ...CHECKOUT.init.headers,
      "x-request-id": crypto.randomUUID(),
      authorization: `Bearer ${old}`,
    },
  });
  assert.equal(response.status, 200, await response.text());
});

Deno.test("bearerToken() logs the JWKS failure and asks the TPP to come back later", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy(),
    upstream: upstream.url,
    env: { JWKS_URL: `http://127.0.0.1:${closedPort()}/jwks.json` },
  });
  const response = await gateway.fetch(CHECKOUT.path, {
    ...CHECKOUT.init,
    headers: { ...CHECKOUT.init.headers, authorization: `Bearer ${await token()}` },
  });
  const body = await response.json();
  assert.equal(response.status, 503);
  assert.equal(body.tppMessages[0].text, "The keys to check bearer tokens are unavailable");
  assert.equal(response.headers.get("retry-after"), "5");
  assert.equal(response.headers.get("www-authenticate"), null);
  const line = gateway.log.lines.find((l) => l.msg === "jwks unavailable");
  assert.equal(line?.op, "createCheckoutOrder");
  assert.equal(typeof line?.error, "string");
});

Deno.test("bearerToken() takes the TPP id from the policy's client id claim, a non-empty string only", async () => {
  const azp = policy({ client_id_claim: "azp" });
  await withGateway({ policy: azp }, async (call, { log }) => {
    await call(CHECKOUT, { authorization: `Bearer ${await token({ azp: "shop-9" })}` });
    await call(CHECKOUT, { authorization: `Bearer ${await token({ azp: "" })}` });
    await call(CHECKOUT, { authorization: `Bearer ${await token({ azp: 42 })}` });
    const tpps = log.filter((l) => l.op === "createCheckoutOrder").map((l) => l.tpp);
    assert.equal(tpps.length, 3);
    assert.equal(tpps[0], "shop-9");
    assert.notEqual(tpps[1], "");
    assert.notEqual(tpps[2], 42);
    assert.notEqual(tpps[1], "PSDGE-NBG-123456", "the default claim is not read");
  });
});

Deno.test("bearerToken() compares PSU-ID with the claim only when both are there", async () => {
  await withGateway({ policy: policy({ psu_id_claim: "sub" }) }, async (call) => {
    const bearer = { authorization: `Bearer ${await token({ sub: "PSU-1" })}` };
    assert.equal((await call(CHECKOUT, bearer)).response.status, 200, "no PSU-ID");
  });
  await withGateway({}, async (call) => {
    const bearer = { authorization: `Bearer ${await token({ sub: "PSU-1" })}` };
    assert.equal(
      (await call(CHECKOUT, { ...bearer, "psu-id": "PSU-2" })).response.status,
      200,
      "no psu_id_claim",
    );
  });
});

Deno.test("bearerToken() checks an introspected token's dates with the leeway, its issuer when it names one", async () => {
  const now = Math.floor(Date.now() / 1000);
  await using endpoint = introspectionServer({
    "just-expired": { ...ACTIVE, exp: now - 20 },
    "long-expired": { ...ACTIVE, exp: now - 40 },
    "early": { ...ACTIVE, nbf: now + 40 },
    "almost": { ...ACTIVE, nbf: now + 20 },
    "no-issuer": { ...ACTIVE, iss: undefined },
    "audiences": { ...ACTIVE, aud: ["other", "xs2a"] },
    "other-audience": { ...ACTIVE, aud: "other" },
  });
  const withAudience = introspectionPolicy(endpoint.url, {}, "introspection", {
    audience: ["xs2a"],
  });
  const tokens = [
    "just-expired",
    "long-expired",
    "early",
    "almost",
    "no-issuer",
    "audiences",
    "other-audience",
  ];
  const { answers } = await introspected(
    buildPolicy(withAudience, {
      defaults: { bearer_token: { audience: undefined } },
    }),
    tokens.slice(0, 5),
    { now: () => now * 1000 },
  );
  const outcome = (a: (typeof answers)[number]) => [a.status, a.body.tppMessages?.[0].code];
  assert.deepEqual(answers.map(outcome), [
    [200, undefined],
    [401, "TOKEN_EXPIRED"],
    [401, "TOKEN_INVALID"],
    [200, undefined],
    [200, undefined],
  ]);
  assert.equal(
    answers[2].body.tppMessages[0].text,
    'The bearer token\'s "nbf" claim is not valid here',
  );
  const aud = await introspected(withAudience, tokens.slice(5), { now: () => now * 1000 });
  assert.deepEqual(aud.answers.map(outcome), [[200, undefined], [401, "TOKEN_INVALID"]]);
  assert.equal(
    aud.answers[1].body.tppMessages[0].text,
    'The bearer token\'s "aud" claim is not valid here',
  );
});

Deno.test("bearerToken() refuses a signed JWS whose payload is no JWT as a token, not a 503", async () => {
  await withGateway({}, async (call) => {
    const text = await signedByHand({ alg: "RS256", kid: "k1" }, "not a claims set");
    assertRejected(
      await call(CHECKOUT, { authorization: `Bearer ${text}` }),
      "TOKEN_UNKNOWN",
      /^The bearer token is not a well-formed signed JWT$/,
    );
  });
});

Deno.test("bearerToken() refuses a kid that names two keys of the JWKS as an unknown key, not a 503", async () => {
  const third = await generateKeyPair("RS256");
  const twin = await jwk(third.publicKey, "k1", "RS256");
  const jwks = jwksServer([twin, k1]);
  await using _jwks = jwks.server;
  await withGateway({ jwks }, async (call, { reached }) => {
    assertRejected(
      await call(CHECKOUT, { authorization: `Bearer ${await token()}` }),
      "TOKEN_UNKNOWN",
      /^The bearer token's signing key is not known$/,
    );
    assert.equal(reached(), 0);
  });
});

Deno.test("bearerToken() requires a token wherever the operation's scopes are set, unless required: false", async () => {
  await withGateway({}, async (call, { reached }) => {
    assertRejected(await call(ACCOUNTS), "TOKEN_UNKNOWN", /must carry a bearer token/);
    assert.equal(reached(), 0);
  });
  const optional = buildPolicy(policy(), {
    groups: { ais: { bearer_token: { required: false } } },
  });
  await withGateway({ policy: optional }, async (call, { reached }) => {
    assert.equal((await call(ACCOUNTS)).response.status, 200);
    assert.equal(reached(), 1);
  });
});

Deno.test("bearerToken() with verification introspection needs no JWKS, with jwt asks no endpoint", async () => {
  await using endpoint = introspectionServer({ "opaque-1": ACTIVE });
  const onlyIntrospection = buildPolicy(introspectionPolicy(endpoint.url), {
    defaults: { bearer_token: { jwks_url: undefined } },
  });
  const { answers } = await introspected(onlyIntrospection, ["opaque-1"]);
  assert.equal(answers[0].status, 200, JSON.stringify(answers[0].body));
  assert.equal(endpoint.received.length, 1);
  const jwtOnly = await introspected(
    introspectionPolicy(endpoint.url, {}, "jwt"),
    ["opaque-1"],
  );
  assert.equal(jwtOnly.answers[0].status, 401);
  assert.match(jwtOnly.answers[0].body.tppMessages[0].text, /not a well-formed signed JWT/);
  assert.equal(endpoint.received.length, 1, "the endpoint was not asked");
});

Deno.test("bearerToken() takes an introspected exp at exactly the leeway as expired, an nbf at it as valid", async () => {
  const now = Math.floor(Date.now() / 1000);
  await using endpoint = introspectionServer({
    "exp-at-leeway": { ...ACTIVE, exp: now - 30 },
    "nbf-at-leeway": { ...ACTIVE, nbf: now + 30 },
  });
  const { answers } = await introspected(
    introspectionPolicy(endpoint.url),
    ["exp-at-leeway", "nbf-at-leeway"],
    { now: () => now * 1000 },
  );
  assert.deepEqual(answers.map((a) => a.status), [401, 200]);
  assert.equal(answers[0].body.tppMessages[0].code, "TOKEN_EXPIRED");
});

Deno.test("bearerToken() refuses a confirmation that is not an object of methods", async () => {
  await withGateway({}, async (call, { reached }) => {
    for (const [cnf, method] of [["x5t", "x5t"], [null, "null"]] as const) {
      const result = await call(CHECKOUT, { authorization: `Bearer ${await token({ cnf })}` });
      assertRejected(
        result,
        "TOKEN_INVALID",
        new RegExp(`^The bearer token's confirmation "cnf\\.${method}" cannot be checked here`),
      );
    }
    assert.equal(reached(), 0);
  });
});

Deno.test("bearerToken() makes a string sub the PSU of a request without PSU-ID", async () => {
  const perPsu = buildPolicy(policy(), {
    defaults: {
      rate_limit: {
        mode: "enforce",
        limits: { per_psu: { key: ["tpp", "psu_id"], limit: 1, window: "1m" } },
      },
    },
  });
  await withGateway({ policy: perPsu }, async (call) => {
    const status = async (claims: JWTPayload) =>
      (await call(CHECKOUT, { authorization: `Bearer ${await token(claims)}` })).response.status;
    assert.equal(await status({ sub: "psu-a" }), 200);
    assert.equal(await status({ sub: "psu-a" }), 429);
    assert.equal(await status({ sub: "psu-b" }), 200, "another PSU, its own count");
    // A sub that is no string names no PSU: the TPP's one unknown PSU.
    assert.equal(await status({ sub: 42 as unknown as string }), 200);
    assert.equal(await status({ sub: undefined }), 429);
  });
});

// The token's binding to the transport certificate (RFC 8705), in-process; the attacks are in
// tests/security/who_is_calling_test.ts.

const ca = await createCa();
const shop = await issue(ca);
const otherShop = await issue(ca, { orgId: "PSDGE-NBG-777777" });

/** RFC 8705: the base64url SHA-256 of the certificate's DER. */
async function thumbprint(cert: typeof shop): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", cert.cert.rawData)));
}

function withCertificate(bearer: BearerOptions = {}) {
  return buildPolicy(policy(bearer), {
    trust: { anchors: [ca.pem] },
    defaults: { tpp_certificate: { form: "nginx" } },
  });
}

Deno.test("bearerToken() takes a token bound to the transport certificate, refuses it with another", async () => {
  await withGateway({ policy: withCertificate() }, async (call, { reached }) => {
    const bound = await token({ cnf: { "x5t#S256": await thumbprint(shop) } });
    const send = (cert: typeof shop) =>
      call(CHECKOUT, {
        authorization: `Bearer ${bound}`,
        "x-ssl-client-cert": nginxHeader(cert),
      });
    assert.equal((await send(shop)).response.status, 200);
    assertRejected(
      await send(otherShop),
      "TOKEN_INVALID",
      /^The bearer token is bound to another certificate than the transport certificate \("cnf\.x5t#S256"\)$/,
    );
    assert.equal(reached(), 1);
  });
});

Deno.test("bearerToken() compares the certificate_claim with the certificate's TPP, only with a certificate", async () => {
  const policy = withCertificate({ certificate_claim: "azp" });
  await withGateway({ policy }, async (call, { reached, log }) => {
    const send = async (claims: JWTPayload, cert?: typeof shop) =>
      await call(CHECKOUT, {
        authorization: `Bearer ${await token(claims)}`,
        ...(cert ? { "x-ssl-client-cert": nginxHeader(cert) } : {}),
      });
    assert.equal((await send({ azp: "PSDGE-NBG-123456" }, shop)).response.status, 200);
    assertRejected(
      await send({ azp: "PSDGE-NBG-777777", client_id: "PSDGE-NBG-123456" }, shop),
      "TOKEN_INVALID",
      /^The bearer token's "azp" claim must be the transport certificate's TPP "PSDGE-NBG-123456"$/,
    );
    assert.equal((await send({ azp: "PSDGE-NBG-777777" })).response.status, 200, "no certificate");
    assert.equal(reached(), 2);
    // The certificate named the TPP; the token's client id does not replace it.
    assert.equal(log.find((l) => l.op === "createCheckoutOrder")?.tpp, "PSDGE-NBG-123456");
  });
  await withGateway({ policy: withCertificate() }, async (call, { log }) => {
    await call(CHECKOUT, {
      authorization: `Bearer ${await token({ client_id: "shop-77" })}`,
      "x-ssl-client-cert": nginxHeader(otherShop),
    });
    assert.equal(log.find((l) => l.op === "createCheckoutOrder")?.tpp, "PSDGE-NBG-777777");
  });
});

Deno.test("bearerToken() with require_binding refuses a token bound to no certificate, or presented without one", async () => {
  await withGateway(
    { policy: withCertificate({ require_binding: true }) },
    async (call, { reached }) => {
      const send = async (claims: JWTPayload, cert?: typeof shop) =>
        await call(CHECKOUT, {
          authorization: `Bearer ${await token(claims)}`,
          ...(cert ? { "x-ssl-client-cert": nginxHeader(cert) } : {}),
        });
      const bound = { cnf: { "x5t#S256": await thumbprint(shop) } };
      assert.equal((await send(bound, shop)).response.status, 200);
      assertRejected(
        await send({ client_id: "PSDGE-NBG-123456" }, shop),
        "TOKEN_INVALID",
        /^The bearer token must be bound to the transport certificate \("cnf\.x5t#S256"\)$/,
      );
      assertRejected(
        await send(bound),
        "TOKEN_INVALID",
        /^The bearer token is bound to a certificate \("cnf\.x5t#S256"\), and the request carries none$/,
      );
      assertRejected(
        await send({ client_id: "PSDGE-NBG-123456" }),
        "TOKEN_INVALID",
        /^The bearer token must be bound to a transport certificate, and the request carries none$/,
      );
      assert.equal(reached(), 1);
    },
  );
  // A claim naming the certificate's TPP binds the token as well.
  await withGateway(
    { policy: withCertificate({ require_binding: true, certificate_claim: "azp" }) },
    async (call, { reached }) => {
      const send = async (claims: JWTPayload) =>
        await call(CHECKOUT, {
          authorization: `Bearer ${await token(claims)}`,
          "x-ssl-client-cert": nginxHeader(shop),
        });
      assert.equal((await send({ azp: "PSDGE-NBG-123456" })).response.status, 200);
      assertRejected(await send({ azp: "PSDGE-NBG-777777" }), "TOKEN_INVALID", /"azp" claim/);
      assert.equal(reached(), 1);
    },
  );
});

Deno.test("bearerToken() requires a Bearer token on the installment calculator, not only an Authorization", async () => {
  await withGateway({}, async (call, { reached }) => {
    assertRejected(
      await call(INSTALLMENT, { authorization: "Basic dTpw" }),
      "TOKEN_UNKNOWN",
      /must carry a bearer token/,
    );
    assert.equal(reached(), 0);
  });
});

Deno.test("bearerToken() reads the scheme at the start of Authorization only", async () => {
  await withGateway({}, async (call, { reached }) => {
    const products = { path: "/v1/products/en", init: {} };
    const other = await call(products, { authorization: "Basic Bearer abc" });
    assert.equal(other.response.status, 200);
    assert.equal(reached(), 1);
  });
});

Deno.test("bearerToken() reads an introspected exp or nbf only as a number", async () => {
  const now = Math.floor(Date.now() / 1000);
  await using endpoint = introspectionServer({
    "string-exp": { ...ACTIVE, exp: "1000" },
    "string-nbf": { ...ACTIVE, nbf: String(now + 3600) },
  });
  const { answers } = await introspected(introspectionPolicy(endpoint.url), [
    "string-exp",
    "string-nbf",
  ]);
  assert.deepEqual(answers.map((a) => a.status), [200, 200]);
});

Deno.test("bearerToken() options bound the leeway, the JWKS refetch interval, max age and timeout", () => {
  const problem = (options: Record<string, unknown>) => {
    const result = bearerToken.options.safeParse({ mode: "enforce", ...options });
    return result.success ? undefined : result.error.issues.map((i) => i.message).join("; ");
  };
  assert.equal(
    problem({ leeway: "0s", refetch_interval: "1s", cache_max_age: "1s", fetch_timeout: "24d" }),
    undefined,
  );
  assert.equal(problem({ leeway: "10m" }), undefined);
  assert.equal(problem({ leeway: "11m" }), 'must be at most 10m, got "11m"');
  assert.equal(problem({ refetch_interval: "999ms" }), 'must be at least 1s, got "999ms"');
  assert.equal(problem({ cache_max_age: "999ms" }), 'must be at least 1s, got "999ms"');
  assert.equal(problem({ fetch_timeout: "25d" }), 'must be at most 24d, got "25d"');
});

Deno.test("bearerToken() refuses a policy with neither or both of jwks_url and jwks_file", async () => {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(file, JSON.stringify({ keys: [k1] }));
  for (const keys of [{ jwks_url: undefined }, { jwks_file: file }]) {
    await assert.rejects(
      () =>
        startGateway({
          policy: policy(keys),
          upstream: "http://127.0.0.1:9",
          env: { JWKS_URL: "http://127.0.0.1:9/jwks.json" },
        }),
      /bearer_token for every operation: give one of jwks_url and jwks_file/,
      JSON.stringify(keys),
    );
  }
  await Deno.remove(file);
});

Deno.test("bearerToken() takes a Bearer value behind non-HTTP white space as a Bearer value", async () => {
  await withGateway({}, async (call, { reached, log }) => {
    const products = { path: "/v1/products/en", init: {} };
    assertRejected(
      await call(products, { authorization: "\u00a0Bearer a b" }),
      "TOKEN_UNKNOWN",
      /must look like Bearer <JWT>/,
    );
    assert.equal(reached(), 0);
    const expired = await token({}, { exp: Math.floor(Date.now() / 1000) - 120 });
    assertRejected(await call(CHECKOUT, { authorization: `Bearer ${expired}` }), "TOKEN_EXPIRED");
    assert.ok(!log.some((l) => l.msg === "jwks unavailable"), "a refused token is no JWKS failure");
  });
});

Deno.test("bearerToken() words each refusal of an introspected token and of PSU-ID", async () => {
  const now = Math.floor(Date.now() / 1000);
  await using endpoint = introspectionServer({
    expired: { ...ACTIVE, exp: now - 60 },
    "other-issuer": { ...ACTIVE, iss: "https://evil.example" },
    "no-aud": ACTIVE,
  });
  const withAudience = introspectionPolicy(endpoint.url, {}, "introspection", {
    audience: ["xs2a"],
  });
  const { answers } = await introspected(withAudience, ["expired", "other-issuer", "no-aud"]);
  assert.deepEqual(answers.map((a) => [a.body.tppMessages[0].text, a.body.tppMessages[0].path]), [
    ["The bearer token has expired", "Authorization"],
    ["The bearer token was not issued by the bank's authorisation server", "Authorization"],
    ['The bearer token must carry the "aud" claim', "Authorization"],
  ]);
  const down = await introspected(introspectionPolicy(`http://127.0.0.1:${closedPort()}/i`), [
    "opaque-1",
  ]);
  assert.equal(
    down.answers[0].body.tppMessages[0].text,
    "The authorisation server cannot check bearer tokens now",
  );
  await withGateway({ policy: policy({ psu_id_claim: "sub" }) }, async (call) => {
    const bearer = { authorization: `Bearer ${await token({ sub: "PSU-1" })}` };
    const other = await call(CHECKOUT, { ...bearer, "psu-id": "PSU-2" });
    assert.equal(
      other.response.headers.get("www-authenticate"),
      `Bearer realm="xs2a-edge", error="invalid_token", ` +
        `error_description="Header 'PSU-ID' must match the bearer token's 'sub' claim"`,
    );
    // A valid token behind a no-break space is still the Bearer token.
    const spaced = await call(CHECKOUT, { authorization: `\u00a0Bearer ${await token()}` });
    assert.equal(spaced.response.status, 200);
  });
});
