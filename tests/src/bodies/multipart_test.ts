import assert from "node:assert/strict";
import { MAX_PARTS, parseMultipart, validBoundary } from "../../../src/bodies/multipart.ts";

const B = "----b0undary";

function form(...parts: string[]): string {
  return parts.map((part) => `--${B}\r\n${part}\r\n`).join("") + `--${B}--\r\n`;
}

Deno.test("parseMultipart() returns each part's name, media type and content", () => {
  const text = form(
    'Content-Disposition: form-data; name="xml_sct"\r\nContent-Type: application/xml\r\n\r\n<Document/>',
    "content-disposition: form-data; name=json_standingorderType\r\n\r\n{\r\n}",
  );
  assert.deepEqual(parseMultipart(text, B), {
    parts: [
      { name: "xml_sct", contentType: "application/xml", text: "<Document/>" },
      { name: "json_standingorderType", contentType: undefined, text: "{\r\n}" },
    ],
  });
  // A preamble before the first boundary and no final CRLF are allowed (RFC 2046).
  const preamble = `ignored\r\n${form('Content-Disposition: form-data; name="a"\r\n\r\nx')}`;
  assert.deepEqual(parseMultipart(preamble.slice(0, -2), B), {
    parts: [{ name: "a", contentType: undefined, text: "x" }],
  });
});

Deno.test("parseMultipart() refuses what a lenient parser would read differently", () => {
  const part = 'Content-Disposition: form-data; name="a"\r\n\r\nx';
  const cases: [string, RegExp][] = [
    ["no boundary here", /does not contain the boundary/],
    [`--${B}\r\n${part}`, /ends before its closing boundary/],
    [form(part, part), /has the part "a" more than once/],
    [form(part) + "trailing", /content after its last part/],
    [form("Content-Type: text/plain\r\n\r\nx"), /without "Content-Disposition"/],
    [form('Content-Disposition: attachment; name="a"\r\n\r\nx'), /not form-data/],
    [form("Content-Disposition: form-data\r\n\r\nx"), /without a name/],
    [form('Content-Disposition: form-data; name="a"; name="b"\r\n\r\nx'), /named twice/],
    [form(`${part.split("\r\n")[0]}\r\n${part}`), /two "Content-Disposition"/],
    [form("Bad header\r\n\r\nx"), /malformed part header/],
    [`--${B}\n${part}\r\n--${B}--`, /malformed boundary line/],
    [
      form(...Array.from({ length: MAX_PARTS + 1 }, (_, i) => part.replace('"a"', `"p${i}"`))),
      /more than 8 parts/,
    ],
  ];
  for (const [text, problem] of cases) {
    const result = parseMultipart(text, B);
    assert.ok("problem" in result, text);
    assert.match(result.problem, problem, text);
  }
});

Deno.test("validBoundary() follows RFC 2046: 1 to 70 characters, no trailing space", () => {
  for (const boundary of ["a", "----WebKitFormBoundary7MA4YWxkTrZu0gW", "x".repeat(70), "a b"]) {
    assert.equal(validBoundary(boundary), true, boundary);
  }
  for (const boundary of ["", "x".repeat(71), "ab ", 'a"b', "a;b"]) {
    assert.equal(validBoundary(boundary), false, boundary);
  }
});
