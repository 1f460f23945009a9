import assert from "node:assert/strict";
import { acceptable, parseMediaType } from "../../../src/lib/media_type.ts";

Deno.test("parseMediaType() reads type, subtype and parameters", () => {
  const media = parseMediaType('Application/JSON; charset="UTF-8"')!;
  assert.equal(media.essence, "application/json");
  assert.equal(media.params.get("charset"), "UTF-8");
  assert.equal(parseMediaType("json"), undefined);
  assert.equal(parseMediaType("a/b/c"), undefined);
});

Deno.test("parseMediaType() trims around the type and refuses characters outside a token", () => {
  assert.equal(parseMediaType(" application/json ; charset=utf-8")?.essence, "application/json");
  for (
    const text of ["application/js@n", "applic@tion/json", "@application/json", "application/json@"]
  ) {
    assert.equal(parseMediaType(text), undefined, text);
  }
});

Deno.test("parseMediaType() answers a text it saw before as it did the first time", () => {
  const first = parseMediaType("application/json; charset=utf-8");
  assert.deepEqual(parseMediaType("application/json; charset=utf-8"), first);
  assert.equal(parseMediaType("application/json@"), undefined);
  assert.equal(parseMediaType("application/json@"), undefined);
});

Deno.test("acceptable() honours wildcards and q=0", () => {
  const json = ["application/json"];
  assert.equal(acceptable("*/*", json), true);
  assert.equal(acceptable("application/*;q=0.1", json), true);
  assert.equal(acceptable("text/*", json), false);
  assert.equal(acceptable("application/json;q=0", json), false);
  assert.equal(acceptable("application/json;q=0.0, text/html", json), false);
  assert.equal(acceptable(", ,application/json", json), true);
});
