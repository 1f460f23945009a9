import assert from "node:assert/strict";
import { utf8 } from "../../../src/lib/utf8.ts";

const bytes = (...b: number[]) => new Uint8Array(b);

Deno.test("utf8() decodes UTF-8 (a U+FFFD of the sender's own included) and refuses other bytes", () => {
  for (const bom of ["keep", "drop"] as const) {
    assert.equal(utf8(bytes(0x7b, 0xc3, 0xa9, 0x7d), bom), "{\u00e9}");
    assert.equal(utf8(bytes(0xef, 0xbf, 0xbd), bom), "\ufffd");
    assert.equal(utf8(bytes(0x61, 0xff), bom), undefined);
    // A replacement next to the sender's own U+FFFD is still a replacement.
    assert.equal(utf8(bytes(0xef, 0xbf, 0xbd, 0xc3), bom), undefined);
    assert.equal(utf8(bytes(0xed, 0xa0, 0x80), bom), undefined, "a surrogate is not UTF-8");
  }
});

Deno.test("utf8() keeps a leading byte order mark only when asked to", () => {
  assert.equal(utf8(bytes(0xef, 0xbb, 0xbf, 0x61), "keep"), "\ufeffa");
  assert.equal(utf8(bytes(0xef, 0xbb, 0xbf, 0xef, 0xbf, 0xbd), "keep"), "\ufeff\ufffd");
  assert.equal(utf8(bytes(0xef, 0xbb, 0xbf, 0x61)), "a");
  assert.equal(utf8(bytes(0xef, 0xbb, 0xbf, 0xef, 0xbf, 0xbd)), "\ufffd");
});
