import assert from "node:assert/strict";
import { crossSite } from "../../src/sandbox/control_guard.ts";

Deno.test("crossSite() trusts Sec-Fetch-Site where a browser sends it, else compares Origin's host", () => {
  const host = "127.0.0.1:8081";
  const cases: [Record<string, string>, boolean][] = [
    [{}, false],
    [{ "sec-fetch-site": "same-origin" }, false],
    [{ "sec-fetch-site": "none" }, false],
    [{ "sec-fetch-site": "same-site" }, true],
    [{ "sec-fetch-site": "cross-site" }, true],
    // Sec-Fetch-Site wins over an Origin that would pass.
    [{ "sec-fetch-site": "cross-site", origin: "http://127.0.0.1:8081" }, true],
    [{ origin: "http://127.0.0.1:8081" }, false],
    [{ origin: "https://127.0.0.1:8081" }, false],
    [{ origin: "http://127.0.0.1:8082" }, true],
    [{ origin: "http://localhost:8081" }, true],
    [{ origin: "null" }, true],
    [{ origin: "not a url" }, true],
  ];
  for (const [headers, expected] of cases) {
    assert.equal(crossSite(new Headers(headers), host), expected, JSON.stringify(headers));
  }
});
