import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import { startGateway } from "../support/gateway.ts";
import { closedPort, startUpstream } from "../support/upstream.ts";
import { checkoutOrderBody } from "../support/requests.ts";

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

function policy(extra = "", bearer = "") {
  return `
upstream:
  url: \${UPSTREAM_URL}
defaults:
  bearer_token:
    mode: enforce
    jwks_url: \${JWKS_URL}
    issuer: ${ISSUER}
    audience: [xs2a]
    refetch_interval: 60s
${bearer}
groups:
  ais:
    bearer_token: { scopes: [accounts] }
${extra}`;
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
  policy?: string;
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
    const fast = policy().replace("refetch_interval: 60s", "refetch_interval: 1s");
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
  const strict = policy("", "    psu_id_claim: sub");
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
    const fromFile = policy().replace("jwks_url: ${JWKS_URL}", `jwks_file: ${file}`);
    await withGateway({ policy: fromFile }, async (call) => {
      assert.equal(
        (await call(CHECKOUT, { authorization: `Bearer ${await token()}` })).response.status,
        200,
      );
    });
    const missing = policy().replace("jwks_url: ${JWKS_URL}", "jwks_file: /nonexistent/jwks.json");
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
