import assert from "node:assert/strict";
import { hrefRewriter, links, locationRewriter, rewriteLinks } from "../../middleware/links.ts";
import { Context } from "hono";
import { PIPELINE } from "../../middleware/mod.ts";
import { operation } from "../../src/psd2/catalogue.ts";
import type { GatewayContext } from "../../src/core/check.ts";
import { type Answer, answerText } from "../../src/core/answer.ts";
import { parsePolicy } from "../../src/policy/load.ts";
import { buildContext } from "../support/sections.ts";
import { buildPolicy, policyYaml } from "../support/policies.ts";

const rewrite = hrefRewriter({
  prefixes: ["/psd2/v1", "/v1", "/0.8/v1"],
  publicPrefix: "/v1",
  origins: ["http://core.internal:9000"],
  mappings: [],
});

Deno.test("hrefRewriter() maps legacy prefixes and upstream origins to the public prefix", () => {
  assert.equal(rewrite("/psd2/v1/payments/sepa/1"), "/v1/payments/sepa/1");
  assert.equal(rewrite("/0.8/v1/consents/c"), "/v1/consents/c");
  assert.equal(rewrite("/v1/accounts"), "/v1/accounts");
  assert.equal(rewrite("http://core.internal:9000/psd2/v1/x?y=1"), "/v1/x?y=1");
  assert.equal(
    rewrite("http://core.internal:9000/api/v1/checkout/orders/7"),
    "/api/v1/checkout/orders/7",
  );
});

Deno.test("hrefRewriter() maps the upstream's bare origin to the root, never to an empty href", () => {
  assert.equal(rewrite("http://core.internal:9000"), "/");
  assert.equal(rewrite("http://core.internal:9000/"), "/");
  assert.equal(rewrite("http://core.internal:9000?page=2"), "?page=2");
});

Deno.test("hrefRewriter() maps a prefix that ends the href or is followed by a query or fragment", () => {
  assert.equal(rewrite("/psd2/v1"), "/v1");
  assert.equal(rewrite("/psd2/v1?page=2"), "/v1?page=2");
  assert.equal(rewrite("/psd2/v1#top"), "/v1#top");
});

Deno.test("hrefRewriter() maps the longest matching prefix, whatever the order of the list", () => {
  const nested = hrefRewriter({
    prefixes: ["/core", "/core/v1"],
    publicPrefix: "/v1",
    origins: [],
    mappings: [],
  });
  assert.equal(nested("/core/v1/payments/1"), "/v1/payments/1");
  assert.equal(nested("/core/payments/1"), "/v1/payments/1");
});

Deno.test("hrefRewriter() ignores trailing slashes of a configured origin", () => {
  const slashed = hrefRewriter({
    prefixes: ["/psd2/v1"],
    publicPrefix: "/v1",
    origins: ["http://core.internal:9000//"],
    mappings: [],
  });
  assert.equal(slashed("http://core.internal:9000/psd2/v1/x"), "/v1/x");
});

Deno.test("hrefRewriter() leaves links elsewhere alone", () => {
  assert.equal(rewrite("https://bank.example/sca/1"), "https://bank.example/sca/1");
  assert.equal(rewrite("/psd2/v10/x"), "/psd2/v10/x");
  assert.equal(
    rewrite("http://core.internal:90001/psd2/v1/x"),
    "http://core.internal:90001/psd2/v1/x",
  );
});

Deno.test("hrefRewriter() applies configured mappings", () => {
  const mapped = hrefRewriter({
    prefixes: ["/psd2/v1"],
    publicPrefix: "/xs2a/v1",
    origins: [],
    mappings: [{ from: "https://sca.core.internal/", to: "https://sca.bank.example/" }],
  });
  assert.equal(mapped("/psd2/v1/consents/1"), "/xs2a/v1/consents/1");
  assert.equal(
    mapped("https://sca.core.internal/redirect/1"),
    "https://sca.bank.example/redirect/1",
  );
});

Deno.test("rewriteLinks() rewrites hrefs under _links at any depth, in links arrays and elsewhere", () => {
  const text = JSON.stringify({
    _links: {
      self: { href: "/psd2/v1/payments/sepa/1" },
      scaRedirect: { href: "https://bank.example/sca" },
    },
    accounts: [{ resourceId: "a", _links: { balances: { href: "/psd2/v1/accounts/a/balances" } } }],
    links: [{ href: "http://core.internal:9000/api/v1/checkout/orders/7", rel: "self" }],
    href: "/psd2/v1/not-a-link",
  });
  const out = JSON.parse(rewriteLinks(text, rewrite)!);
  assert.equal(out._links.self.href, "/v1/payments/sepa/1");
  assert.equal(out._links.scaRedirect.href, "https://bank.example/sca");
  assert.equal(out.accounts[0]._links.balances.href, "/v1/accounts/a/balances");
  assert.equal(out.links[0].href, "/api/v1/checkout/orders/7");
  assert.equal(out.href, "/v1/not-a-link", "no internal prefix leaks, wherever the href is");
});

Deno.test("rewriteLinks() handles escapes and leaves everything else byte for byte", () => {
  const text =
    '{"note":"say \\"href\\": \\"/psd2/v1/x\\"", "_links" : {"self" : {"href" : "\\/psd2\\/v1\\/a\\u00e9"}}, "n": 1.50}';
  const out = rewriteLinks(text, rewrite)!;
  assert.equal(
    out,
    '{"note":"say \\"href\\": \\"/psd2/v1/x\\"", "_links" : {"self" : {"href":"/v1/a\u00e9"}}, "n": 1.50}',
  );
  assert.equal(
    JSON.parse(out).note,
    'say "href": "/psd2/v1/x"',
    "text inside strings is not a member",
  );
});

Deno.test("rewriteLinks() reports no change for bodies without links to rewrite", () => {
  assert.equal(rewriteLinks('{"transactionStatus":"RCVD"}', rewrite), undefined);
  assert.equal(rewriteLinks('{"_links":{"self":{"href":"/v1/x"}}}', rewrite), undefined);
  assert.equal(rewriteLinks('{"href": not json', rewrite), undefined);
});

Deno.test("locationRewriter() takes any origin off a Location under an upstream prefix", () => {
  const rewrite = locationRewriter({
    prefixes: ["/psd2/v1", "/v1"],
    publicPrefix: "/v1",
    origins: ["http://core.internal:9000"],
    mappings: [],
  });
  const location = (value: string) => rewrite(value, "api.bank.example");
  assert.equal(location("http://core-7.internal:8443/psd2/v1/payments/p/1"), "/v1/payments/p/1");
  assert.equal(location("https://10.0.0.7/psd2/v1/consents/c?x=1"), "/v1/consents/c?x=1");
  assert.equal(location("//10.0.0.7/psd2/v1/consents/c"), "/v1/consents/c");
  assert.equal(location("/psd2/v1/consents/c"), "/v1/consents/c");
  // An upstream origin's own URL outside the prefixes: its path.
  assert.equal(location("http://core.internal:9000/other/1"), "/other/1");
  // A URI without an authority (scheme:/path) names no host to take off, even when a "://"
  // follows later: as it is.
  for (const uri of ["urn:/psd2/v1/payments/p-1?back=https://tpp.example", "urn:/psd2/v1/x"]) {
    assert.equal(location(uri), uri);
  }
});

Deno.test("locationRewriter() drops an absolute Location of an origin neither the request's nor listed", () => {
  const rewrite = locationRewriter(
    { prefixes: ["/psd2/v1"], publicPrefix: "/v1", origins: [], mappings: [] },
    ["https://www.bank.example"],
  );
  const location = (value: string) => rewrite(value, "api.bank.example");
  assert.equal(location("https://api.bank.example/help"), "https://api.bank.example/help");
  assert.equal(location("https://www.bank.example/sca/1"), "https://www.bank.example/sca/1");
  assert.equal(location("/relative/path"), "/relative/path");
  for (
    const value of [
      "http://core-app-3.int.bank.local:8080/internal/jobs/7",
      "https://www.bank.example:8443/sca/1",
      "//core-app-3.int.bank.local/x",
      "/\\core-app-3.int.bank.local/x",
      " \\\\core-app-3.int.bank.local/x",
      "http://[bad/psd2/v1/x",
    ]
  ) {
    assert.equal(location(value), undefined, value);
  }
});

Deno.test("rewriteLinks() leaves an href that is no valid JSON string as it is, and rewrites the others", () => {
  assert.equal(
    rewriteLinks('{"href":"\\x","_links":{"self":{"href":"/psd2/v1/a"}}}', rewrite),
    '{"href":"\\x","_links":{"self":{"href":"/v1/a"}}}',
  );
});

function build(options: Record<string, unknown>) {
  return links.create(links.options.parse(options), buildContext(operation("getAccountList")));
}

Deno.test("links() builds nothing when rewrite is false", () => {
  assert.equal(build({ rewrite: false }), undefined);
  assert.notEqual(build({}), undefined);
});

/** Runs the links check's answer step on an answer with `headers` and `body`. */
async function answerStep(headers: [string, string][], body: string | null): Promise<Answer> {
  const stage = build({})!;
  const c = new Context(new Request("http://gateway.test/v1/accounts")) as GatewayContext;
  c.set("requestId", "");
  const answer: Answer = { status: 200, headers, body, source: "core" };
  return (await stage.answer!(c, answer)) ?? answer;
}

Deno.test("links() rewrites the hrefs of a JSON answer, whatever the case and parameters of its media type", async () => {
  for (
    const type of ["application/json", "Application/JSON; charset=UTF-8", "application/hal+json"]
  ) {
    const out = await answerStep([["content-type", type]], '{"href":"/psd2/v1/a"}');
    assert.equal(answerText(out), '{"href":"/v1/a"}', type);
    // The upstream URL's own origin (http://127.0.0.1:9 in the test sections) is an upstream origin.
    const absolute = await answerStep(
      [["content-type", type]],
      '{"href":"http://127.0.0.1:9/psd2/v1/a"}',
    );
    assert.equal(answerText(absolute), '{"href":"/v1/a"}', type);
  }
  const text = await answerStep([["content-type", "text/plain"]], '{"href":"/psd2/v1/a"}');
  assert.equal(answerText(text), '{"href":"/psd2/v1/a"}', "not JSON: left as it is");
});

Deno.test("links() drops a Location of a host of the core's network and keeps the others", async () => {
  const out = await answerStep([
    ["location", "http://core-app-3.int.bank.local/internal/1"],
    ["location", "/psd2/v1/b"],
  ], null);
  assert.deepEqual(out.headers, [["location", "/v1/b"]]);
  const only = await answerStep([["location", "http://core-app-3.int.bank.local/x"]], null);
  assert.deepEqual(only.headers, []);
  // The request's own host (gateway.test in answerStep) names nothing internal.
  const own = await answerStep([["location", "https://gateway.test/help"]], null);
  assert.deepEqual(own.headers, [["location", "https://gateway.test/help"]]);
});

Deno.test("links() rewrites Location on every operation, each value of a repeated one on its own", async () => {
  // getAccountList's answer has no Location in the interface; the policy may still pass one on.
  const one = await answerStep([["location", "http://127.0.0.1:9/psd2/v1/consents/c-1"]], null);
  assert.deepEqual(one.headers, [["location", "/v1/consents/c-1"]]);
  const two = await answerStep([
    ["location", "/psd2/v1/a"],
    ["x-other", "kept"],
    ["location", "/psd2/v1/b"],
  ], null);
  assert.deepEqual(two.headers, [["x-other", "kept"], ["location", "/v1/a, /v1/b"]]);
});

Deno.test("links() options refuse a prefix that is no path", () => {
  assert.throws(
    () =>
      parsePolicy(
        "p.yaml",
        policyYaml(buildPolicy({
          upstream: { url: "http://127.0.0.1:9" },
          defaults: { links: { public_prefix: "v1" } },
        })),
        { ...PIPELINE, env: () => undefined },
      ),
    /defaults\.links\.public_prefix: must be a path prefix such as \/psd2\/v1/,
  );
});
