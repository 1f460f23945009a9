import assert from "node:assert/strict";
import { hostInDomains, uriHost } from "../../../src/pki/domains.ts";

Deno.test("hostInDomains() matches exact names and one-label wildcards only", () => {
  const domains = ["tpp.example", "*.api.tpp.example"];
  assert.equal(hostInDomains("tpp.example", domains), true);
  assert.equal(hostInDomains("TPP.Example.", domains), true);
  assert.equal(hostInDomains("x.api.tpp.example", domains), true);
  assert.equal(hostInDomains("api.tpp.example", domains), false);
  assert.equal(hostInDomains(".api.tpp.example", domains), false, "an empty label is no label");
  assert.equal(hostInDomains("a.b.api.tpp.example", domains), false);
  assert.equal(hostInDomains("www.tpp.example", domains), false);
  assert.equal(hostInDomains("tpp.example.evil", domains), false);
  assert.equal(hostInDomains("", domains), false);
});

Deno.test("uriHost() takes the host of absolute URIs only", () => {
  assert.equal(uriHost("https://user@tpp.example:8443/cb?x=1"), "tpp.example");
  assert.equal(uriHost("/relative/path"), undefined);
  assert.equal(uriHost("mailto:ops@tpp.example"), undefined);
});
