import assert from "node:assert/strict";
import {
  byteSize,
  duration,
  hasDotSegment,
  headerName,
  httpUrl,
  mediaType,
  parseDuration,
  pathPrefix,
  pathTemplate,
  port,
} from "../../../src/lib/fields.ts";

function messages(result: { error?: { issues: { message: string }[] } }): string[] {
  return result.error?.issues.map((issue) => issue.message) ?? [];
}

Deno.test("duration() reads 500ms, 30s, 5m, 24h and 1d as milliseconds and refuses anything else", () => {
  const parse = (text: unknown) => duration().safeParse(text);
  assert.deepEqual(
    ["500ms", "30s", "5m", "24h", "1d"].map((t) => parse(t).data),
    [500, 30_000, 300_000, 86_400_000, 86_400_000],
  );
  for (const bad of ["0s", "5", "1w", "-1m", "1.5h", "10 s", "010s", "", "1S"]) {
    assert.equal(parse(bad).success, false, bad);
  }
});

Deno.test("duration() refuses a bare number with a message that asks for a unit", () => {
  const [message] = messages(duration().safeParse(500));
  assert.match(message, /^must be a duration with a unit, such as "500ms"/);
  assert.match(message, /got 500$/);
  assert.match(messages(duration().safeParse("soon"))[0], /got "soon"$/);
});

Deno.test("duration() keeps to its bounds and names them", () => {
  const skew = duration({ min: "0s", max: "1h" });
  assert.equal(skew.parse("0s"), 0);
  assert.equal(skew.parse("60m"), 3_600_000);
  assert.deepEqual(messages(skew.safeParse("61m")), ['must be at most 1h, got "61m"']);
  assert.deepEqual(messages(duration().safeParse("0ms")), ['must be at least 1ms, got "0ms"']);
  assert.match(messages(duration().safeParse("99999999999999999d"))[0], /shorter duration/);
});

Deno.test("duration() gives the JSON Schema a string pattern and keeps defaults as written", () => {
  const schema = duration().prefault("10s").toJSONSchema({ io: "input" }) as Record<
    string,
    unknown
  >;
  assert.equal(schema.type, "string");
  assert.equal(schema.default, "10s");
  assert.ok(new RegExp(schema.pattern as string).test("250ms"));
  assert.equal(duration().prefault("10s").parse(undefined), 10_000);
});

Deno.test("parseDuration() returns milliseconds or undefined", () => {
  assert.equal(parseDuration("2m"), 120_000);
  assert.equal(parseDuration("2"), undefined);
});

Deno.test("port() takes numbers and digit strings from 1 to 65535, or 0 with anyFree", () => {
  assert.equal(port().parse("8080"), 8080);
  assert.equal(port().parse(443), 443);
  for (const bad of ["abc", "", "0", 0, "65536", "80.5", 80.5, "-1", " 80"]) {
    assert.deepEqual(
      messages(port().safeParse(bad)),
      ["must be a port number (1 to 65535)"],
      `${bad}`,
    );
  }
  assert.equal(port({ anyFree: true }).parse("0"), 0);
});

Deno.test("httpUrl(), headerName(), mediaType() and byteSize() accept their kind only", () => {
  assert.equal(httpUrl().safeParse("https://bank.example/jwks").success, true);
  assert.deepEqual(messages(httpUrl().safeParse("ftp://bank.example/")), [
    "must be an http or https URL",
  ]);
  assert.equal(headerName().safeParse("X-SSL-Client-Cert").success, true);
  assert.equal(headerName().safeParse("X_Forwarded").success, false);
  assert.equal(mediaType().safeParse("application/json").success, true);
  assert.equal(mediaType().safeParse("Application/JSON").success, false);
  assert.equal(byteSize().parse(65_536), 65_536);
  assert.deepEqual(messages(byteSize().safeParse(0)), ["must be at least 1 byte"]);
  assert.deepEqual(messages(byteSize().safeParse("64KiB")), ["must be a whole number of bytes"]);
});

Deno.test("hasDotSegment() finds . and .. segments, also percent-encoded or behind an encoded slash", () => {
  for (
    const path of [
      "/a/../b",
      "/a/./b",
      "/..",
      "/a/%2e%2e/b",
      "/a/%2E./b",
      "/a/.%2e",
      "/a%2f..%2fb",
      "/a%5C..%5Cb",
      "/a\\..\\b",
    ]
  ) {
    assert.equal(hasDotSegment(path), true, path);
  }
  for (const path of ["/a/b", "/a/.well-known", "/a/..b", "/a/b.", "/v1/{x}", "/100%"]) {
    assert.equal(hasDotSegment(path), false, path);
  }
});

Deno.test("pathPrefix() and pathTemplate() refuse dot segments", () => {
  assert.equal(pathPrefix().parse("/psd2/v1"), "/psd2/v1");
  assert.equal(pathPrefix({ optional: true }).parse(""), "");
  assert.equal(pathPrefix().safeParse("").success, false);
  assert.match(messages(pathPrefix().safeParse("/psd2/../admin"))[0], /\. or \.\. segment/);
  assert.equal(pathTemplate().parse("/core/{account-id}"), "/core/{account-id}");
  assert.match(messages(pathTemplate().safeParse("/core/%2e%2e/x"))[0], /\. or \.\. segment/);
  assert.deepEqual(messages(pathTemplate().safeParse("core")), ["must start with /"]);
});
