/**
 * Arbitrary changes of valid requests, one to four stacked: headers dropped, repeated, overlong,
 * with control characters or garbage bytes; bodies of wrong types, extra and missing fields,
 * duplicate keys, deep nesting, huge strings, random bytes, chunked or cut off; paths with encoded
 * slashes, dot segments, unknown or missing segments; odd methods and queries; and near misses,
 * one small edit of a valid header, body string, path segment or query value. They carry no
 * expectation: only the properties every answer has, and the rules whatever is forwarded keeps
 * (tests/support/forwarded_rules.ts), apply.
 */
import fc from "fast-check";
import {
  anyValidRequest,
  FRESH_ID,
  type FuzzRequest,
  jsonBytes,
  render,
  utf8,
} from "./arbitraries.ts";
import { DISPLAY_NAMES, getField, jsonPathText, parses, setField } from "./mutations.ts";

/** Header names a client must not garble (they frame the message; the client sets them). */
const FRAMING = [
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "expect",
  "upgrade",
  "te",
];

/** Bytes an HTTP/1.1 header value can carry to the gateway: tab, visible ASCII, 0x80-0xFF. */
const headerByte = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 1, arbitrary: fc.constant(0x09) },
  { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
).map((b) => String.fromCharCode(b));

/** A header value of such bytes; HTTP trims surrounding spaces and tabs, so none are generated. */
function headerValue(max: number) {
  return fc.string({ unit: headerByte, maxLength: max }).map((v) =>
    v.replace(/^[ \t]+|[ \t]+$/g, "")
  );
}

const headerName = fc.oneof(
  fc.constantFrom(...Object.keys(DISPLAY_NAMES)),
  fc.stringMatching(/^[a-z][a-z0-9-]{0,30}$/),
).filter((n) => !FRAMING.includes(n));

/** Raw characters of a path segment or query: unreserved, sub-delims, ':' '@', percent escapes. */
const rawChar = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(..."abcXYZ019-._~") },
  { weight: 2, arbitrary: fc.constantFrom(..."!$&'()*+,;=:@") },
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.constantFrom("%2F", "%2f", "%2e", "%2E", "%25", "%00", "%5C", "%20", "%3F", "%23", "%0A"),
      fc.nat(255).map((b) => `%${b.toString(16).padStart(2, "0")}`),
      fc.constantFrom("%", "%z", "%C3%A9", "%E2%82", "%ED%A0%80"),
    ),
  },
);
const rawSegment = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: rawChar, maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom(".", "..", "%2e%2e", "", "v1", "payments", "consents") },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9]{100,400}$/) },
);

// Arbitraries drawn from many times, built once (building costs more than drawing).
const SHORT_VALUE = fc.option(headerValue(60), { nil: undefined });
const LONG_VALUE = headerValue(300);
const JSON_6 = fc.jsonValue({ maxDepth: 6 });
const RANDOM_BYTES = fc.uint8Array({ maxLength: 2000 });
const JSON_3 = fc.jsonValue({ maxDepth: 3 });
const KEY = fc.string({ maxLength: 20 });
const JSON_2 = fc.jsonValue({ maxDepth: 2 });
const QUERY_KEY = fc.string({ unit: rawChar, maxLength: 15 });
const QUERY_VALUE = fc.string({ unit: rawChar, maxLength: 30 });
const QUERY_TEXT = fc.string({
  unit: fc.oneof(rawChar, fc.constantFrom("&", "=", "?", "/")),
  maxLength: 60,
});

/** Every path to a value inside a JSON value (objects and arrays), the root included. */
function jsonPaths(value: unknown, at: (string | number)[] = [], out: (string | number)[][] = []) {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => jsonPaths(v, [...at, i], out));
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) jsonPaths(v, [...at, k], out);
  }
  return out;
}

/** The body as JSON, when it is JSON of a size and depth this file can walk recursively. */
function jsonOf(body: string | undefined): unknown {
  if (body === undefined || body.length > 100_000 || /[[{]{64}/.test(body) || !parses(body)) {
    return undefined;
  }
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(body, (c) => c.charCodeAt(0))));
}

function removeField(json: unknown, path: (string | number)[]): unknown {
  if (path.length === 0) return undefined;
  const parent = getField(json, path.slice(0, -1));
  const key = path[path.length - 1];
  if (Array.isArray(parent)) {
    return setField(json, path.slice(0, -1), parent.filter((_, i) => i !== key));
  }
  const copy = { ...(parent as Record<string, unknown>) };
  delete copy[key as string];
  return setField(json, path.slice(0, -1), copy);
}

type Chaos = (r: FuzzRequest) => fc.Arbitrary<FuzzRequest>;

const MAX_CHUNKS = 20_000;
const MAX_HEADER_BLOCK = 60_000;

function change(r: FuzzRequest, what: string, parts: Partial<FuzzRequest>): FuzzRequest {
  const changed = { ...r, ...parts, mutation: `${r.mutation}; ${what}`, expect: undefined };
  // A cut must stay short of the (new) body: see the cut-off change below.
  if (changed.truncateAt !== undefined && !(changed.truncateAt < (changed.body ?? "").length)) {
    delete changed.truncateAt;
  }
  // Deno's server answers a header block over about 64 kB itself (a bare 400): keep under it by
  // shortening the longest values.
  let total = changed.headers.reduce((n, [name, value]) => n + name.length + value.length + 4, 0);
  while (total > MAX_HEADER_BLOCK) {
    const longest = changed.headers.reduce((a, b) => (b[1].length > a[1].length ? b : a));
    const cut = Math.min(longest[1].length - 51, total - MAX_HEADER_BLOCK);
    if (cut <= 0) break;
    changed.headers = changed.headers.map((h) =>
      h === longest ? [h[0], h[1].slice(0, h[1].length - cut)] : h
    );
    total -= cut;
  }
  // At most MAX_CHUNKS chunks: a megabyte in one-byte chunks keeps the gateway reading until its
  // 10 s deadline, past the answer bound (regressions_test.ts sends one-byte chunks on purpose).
  const least = Math.ceil((changed.body ?? "").length / MAX_CHUNKS);
  if (changed.chunks && least > 1) changed.chunks = changed.chunks.map((n) => Math.max(n, least));
  return changed;
}

function splitTarget(target: string): [string, string] {
  const q = target.indexOf("?");
  return q < 0 ? [target, ""] : [target.slice(0, q), target.slice(q)];
}

const CHAOS: Chaos[] = [
  // Headers dropped, repeated, garbled, overlong, added.
  (r) =>
    fc.nat().map((n) => {
      if (r.headers.length === 0) return r;
      const i = n % r.headers.length;
      return change(r, `header ${r.headers[i][0]} dropped`, {
        headers: r.headers.filter((_, j) => j !== i),
      });
    }),
  (r) =>
    fc.tuple(fc.nat(), SHORT_VALUE).map(([n, value]) => {
      if (r.headers.length === 0) return r;
      const [name, old] = r.headers[n % r.headers.length];
      return change(r, `header ${name} repeated`, {
        headers: [...r.headers, [name, value ?? old]],
      });
    }),
  (r) =>
    fc.tuple(headerName, LONG_VALUE).map(([name, value]) =>
      change(r, `header ${name}: ${JSON.stringify(value)}`, {
        headers: [...r.headers.filter(([n]) => n !== name), [name, value]],
      })
    ),
  (r) =>
    fc.tuple(headerName, fc.integer({ min: 51, max: 30_000 })).map(([name, length]) =>
      change(r, `header ${name} of ${length} bytes`, {
        headers: [...r.headers.filter(([n]) => n !== name), [name, "a".repeat(length)]],
      })
    ),
  (r) =>
    fc.constantFrom(
      "text/plain",
      "application/json; charset=utf-16",
      "application/xml",
      "*/*",
      "application/json; boundary",
      "application",
      "",
    ).map((type) =>
      change(r, `Content-Type "${type}"`, {
        headers: [...r.headers.filter(([n]) => n !== "content-type"), ["content-type", type]],
      })
    ),
  // Bodies of other shapes and types.
  (r) =>
    JSON_6.map((value) => change(r, "body replaced by arbitrary JSON", { body: jsonBytes(value) })),
  (r) =>
    RANDOM_BYTES.map((bytes) =>
      change(r, "body replaced by random bytes", { body: String.fromCharCode(...bytes) })
    ),
  (r) =>
    fc.tuple(
      fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 100, max: 50_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: 500_000, max: 1_200_000 }) },
      ),
      fc.constantFrom("a", "\u00e9", "\\n"),
    )
      .map(([length, ch]) =>
        change(r, `body with a string of ${length} characters`, {
          body: utf8(`{"creditorName":"${ch.repeat(length)}"}`),
        })
      ),
  (r) =>
    fc.integer({ min: 2, max: 100_000 }).map((depth) =>
      change(r, `body nested ${depth} deep`, { body: "[".repeat(depth) + "]".repeat(depth) })
    ),
  (r) => {
    const json = jsonOf(r.body);
    if (json === undefined) return fc.constant(r);
    const paths = jsonPaths(json);
    return fc.tuple(
      fc.constantFrom(...paths),
      fc.oneof(
        JSON_3.map((value) => ({ kind: "set", value })),
        fc.constant({ kind: "remove", value: undefined }),
        fc.tuple(KEY, JSON_2).map((
          [key, value],
        ) => ({ kind: "add", value: [key, value] })),
        fc.constantFrom("\u0000", "\u0085", "\t", "\ud800", "\u2028").map((ch) => ({
          kind: "set",
          value: `x${ch}y`,
        })),
      ),
    ).map(([path, edit]) => {
      let value: unknown;
      if (edit.kind === "set") value = setField(json, path, edit.value);
      else if (edit.kind === "remove") value = removeField(json, path);
      else {
        const target = getField(json, path);
        const [key, v] = edit.value as [string, unknown];
        value = target && typeof target === "object" && !Array.isArray(target)
          ? setField(json, path, { ...target, [key]: v })
          : setField(json, path, v);
      }
      return change(r, `body ${edit.kind} at ${jsonPathText(path) || "root"}`, {
        body: value === undefined ? "" : jsonBytes(value),
      });
    });
  },
  (r) =>
    r.body?.startsWith("{") && r.body.length > 2
      ? fc.constantFrom('"creditorName":"x",', '"access":{},', '"a":1,"a":2,').map((dup) =>
        change(r, `body with ${dup}`, { body: `{${dup}${r.body!.slice(1)}` })
      )
      : fc.constant(r),
  (r) => fc.constant(change(r, "body dropped", { body: undefined })),
  // Framing: chunked in odd sizes, or cut off with the connection half-closed.
  (r) =>
    fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 5 }).map((chunks) =>
      change(r, `body chunked ${chunks.join(",")}`, { chunks, body: r.body ?? "" })
    ),
  // (Only bodies cut short: Deno's server drops the answer to a complete request whose client
  // half-closed the connection.)
  (r) =>
    r.body
      ? fc.nat().map((n) => {
        const at = n % r.body!.length;
        return change(r, `body cut off after ${at} bytes`, { truncateAt: at });
      })
      : fc.constant(r),
  // Paths: segments replaced, inserted, removed; dot segments; encoded slashes; overlong ids.
  (r) =>
    fc.tuple(fc.nat(), rawSegment, fc.constantFrom("replace", "insert", "remove")).map((
      [n, segment, how],
    ) => {
      const [path, query] = splitTarget(r.target);
      const parts = path.split("/");
      const i = 1 + (n % (parts.length - 1));
      if (how === "replace") parts[i] = segment;
      else if (how === "insert") parts.splice(i, 0, segment);
      else if (parts.length > 2) parts.splice(i, 1);
      return change(r, `path segment ${i} ${how} ${JSON.stringify(segment)}`, {
        target: parts.join("/") + query,
      });
    }),
  (r) =>
    fc.constantFrom("/", "//", "/.", "/..", "/%2e%2e", "/./", "?").map((tail) => {
      const [path, query] = splitTarget(r.target);
      return change(r, `path ends with ${tail}`, { target: path + tail + query });
    }),
  // Queries.
  (r) =>
    fc.tuple(
      QUERY_KEY,
      QUERY_VALUE,
    )
      .map(([k, v]) => {
        const sep = r.target.includes("?") ? "&" : "?";
        return change(r, `query ${k}=${v}`, { target: `${r.target}${sep}${k}=${v}` });
      }),
  (r) =>
    QUERY_TEXT.map(
      (q) => change(r, `query "${q}"`, { target: splitTarget(r.target)[0] + "?" + q }),
    ),
  // Methods.
  (r) =>
    fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH").map((method) =>
      change(r, `method ${method}`, { method })
    ),
];

// ---------------------------------------------------------------------------------------------
// Near misses: one small edit of a value that was valid, where format rules are most likely to
// have gaps (a separator swapped, a character too many, a case changed).

const EDIT_CHARS = [..."0a Z.,;:-_/%+\t~"].concat(["\u00e9", "\u0085", "\u00a0"]);

/** One small edit of a text: a character deleted, inserted, replaced, doubled, or a case flip. */
function nearMiss(text: string): fc.Arbitrary<string> {
  return fc.tuple(
    fc.nat(),
    fc.constantFrom("delete", "insert", "replace", "double", "case", "cut"),
    fc.constantFrom(...EDIT_CHARS),
  ).map(([n, how, ch]) => {
    const i = n % Math.max(1, text.length);
    switch (how) {
      case "delete":
        return text.slice(0, i) + text.slice(i + 1);
      case "insert":
        return text.slice(0, i) + ch + text.slice(i);
      case "replace":
        return text.slice(0, i) + ch + text.slice(i + 1);
      case "double":
        return text.slice(0, i + 1) + text.slice(i);
      case "case":
        return text === text.toUpperCase() ? text.toLowerCase() : text.toUpperCase();
      default:
        return text.slice(0, i);
    }
  });
}

/** Strings of a JSON value, by path (keys excluded). */
function stringPaths(
  value: unknown,
  at: (string | number)[] = [],
  out: (string | number)[][] = [],
) {
  if (typeof value === "string") out.push(at);
  else if (Array.isArray(value)) value.forEach((v, i) => stringPaths(v, [...at, i], out));
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) stringPaths(v, [...at, k], out);
  }
  return out;
}

const NEAR_MISSES: Chaos[] = [
  (r) => {
    if (r.headers.length === 0) return fc.constant(r);
    return fc.nat(r.headers.length - 1).chain((i) => {
      const [name, value] = r.headers[i];
      const base = value === FRESH_ID ? "99391c7e-ad88-49ec-a2ad-99ddcb1f7721" : value;
      return nearMiss(base).map((edited) => {
        const trimmed = edited.replace(/^[ \t]+|[ \t]+$/g, "");
        return change(r, `header ${name}: ${JSON.stringify(trimmed)}`, {
          headers: r.headers.map((h, j) => j === i ? [name, utf8Latin(trimmed)] : h),
        });
      });
    });
  },
  (r) => {
    const json = jsonOf(r.body);
    const paths = json === undefined ? [] : stringPaths(json);
    if (paths.length === 0) return fc.constant(r);
    return fc.constantFrom(...paths).chain((path) =>
      nearMiss(getField(json, path) as string).map((edited) =>
        change(r, `body ${jsonPathText(path)}: ${JSON.stringify(edited)}`, {
          body: jsonBytes(setField(json, path, edited)),
        })
      )
    );
  },
  (r) => {
    const [path, query] = splitTarget(r.target);
    const parts = path.split("/");
    return fc.nat(parts.length - 2).chain((n) =>
      nearMiss(parts[n + 1]).map((edited) => {
        const segment = encodeURI(edited).replace(/[?#]/g, encodeURIComponent);
        parts[n + 1] = segment;
        return change(r, `path segment ${JSON.stringify(segment)}`, {
          target: parts.join("/") + query,
        });
      })
    );
  },
  (r) => {
    const [path, query] = splitTarget(r.target);
    const pairs = query.slice(1).split("&").filter((p) => p !== "");
    if (pairs.length === 0) return fc.constant(r);
    return fc.nat(pairs.length - 1).chain((i) =>
      nearMiss(pairs[i]).map((edited) => {
        pairs[i] = encodeURI(edited).replace(/#/g, "%23");
        return change(r, `query ${JSON.stringify(pairs[i])}`, {
          target: `${path}?${pairs.join("&")}`,
        });
      })
    );
  },
];

/** A header value: UTF-8 bytes for characters beyond Latin-1 and for C1 controls. */
function utf8Latin(text: string): string {
  return [...text].some((ch) => ch.charCodeAt(0) > 0xff) ? utf8(text) : text;
}

const PICK = fc.oneof(
  ...CHAOS.map((c) => ({ weight: 1, arbitrary: fc.constant(c) })),
  ...NEAR_MISSES.map((c) => ({ weight: 4, arbitrary: fc.constant(c) })),
);

/** A valid request with one to four arbitrary changes; no expectation. */
export const chaosRequest: fc.Arbitrary<FuzzRequest> = fc.tuple(
  anyValidRequest,
  fc.array(PICK, { minLength: 1, maxLength: 4 }),
).chain(([valid, picks]) => {
  let arbitrary: fc.Arbitrary<FuzzRequest> = fc.constant(render(valid, { mutation: "valid" }));
  for (const pick of picks) arbitrary = arbitrary.chain(pick);
  return arbitrary;
});
