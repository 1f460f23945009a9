/**
 * Arbitrary changes of valid requests, one to four stacked: headers dropped, repeated, overlong,
 * with control characters or garbage bytes; bodies of wrong types, extra and missing fields,
 * duplicate keys, deep nesting, huge strings, random bytes, chunked or cut off; paths with encoded
 * slashes, dot segments, unknown or missing segments; odd methods and queries. They carry no
 * expectation: only the properties every answer has, and the rules whatever is forwarded keeps
 * (tests/support/forwarded_rules.ts), apply.
 */
import fc from "fast-check";
import { anyValidRequest, type FuzzRequest, jsonBytes, render, utf8 } from "./arbitraries.ts";
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

function change(r: FuzzRequest, what: string, parts: Partial<FuzzRequest>): FuzzRequest {
  const changed = { ...r, ...parts, mutation: `${r.mutation}; ${what}`, expect: undefined };
  // A cut must stay short of the (new) body: see the cut-off change below.
  if (changed.truncateAt !== undefined && !(changed.truncateAt < (changed.body ?? "").length)) {
    delete changed.truncateAt;
  }
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
    fc.tuple(fc.nat(), fc.option(headerValue(60), { nil: undefined })).map(([n, value]) => {
      if (r.headers.length === 0) return r;
      const [name, old] = r.headers[n % r.headers.length];
      return change(r, `header ${name} repeated`, {
        headers: [...r.headers, [name, value ?? old]],
      });
    }),
  (r) =>
    fc.tuple(headerName, headerValue(300)).map(([name, value]) =>
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
    fc.jsonValue({ maxDepth: 6 }).map((value) =>
      change(r, "body replaced by arbitrary JSON", { body: jsonBytes(value) })
    ),
  (r) =>
    fc.uint8Array({ maxLength: 2000 }).map((bytes) =>
      change(r, "body replaced by random bytes", { body: String.fromCharCode(...bytes) })
    ),
  (r) =>
    fc.tuple(fc.integer({ min: 1000, max: 1_200_000 }), fc.constantFrom("a", "\u00e9", "\\n"))
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
        fc.jsonValue({ maxDepth: 3 }).map((value) => ({ kind: "set", value })),
        fc.constant({ kind: "remove", value: undefined }),
        fc.tuple(fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 2 })).map((
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
      fc.string({ unit: rawChar, maxLength: 15 }),
      fc.string({ unit: rawChar, maxLength: 30 }),
    )
      .map(([k, v]) => {
        const sep = r.target.includes("?") ? "&" : "?";
        return change(r, `query ${k}=${v}`, { target: `${r.target}${sep}${k}=${v}` });
      }),
  (r) =>
    fc.string({ unit: fc.oneof(rawChar, fc.constantFrom("&", "=", "?", "/")), maxLength: 60 }).map(
      (q) => change(r, `query "${q}"`, { target: splitTarget(r.target)[0] + "?" + q }),
    ),
  // Methods.
  (r) =>
    fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH").map((method) =>
      change(r, `method ${method}`, { method })
    ),
];

/** A valid request with one to four arbitrary changes; no expectation. */
export const chaosRequest: fc.Arbitrary<FuzzRequest> = fc.tuple(
  anyValidRequest,
  fc.array(fc.nat(CHAOS.length - 1), { minLength: 1, maxLength: 4 }),
).chain(([valid, picks]) => {
  let arbitrary: fc.Arbitrary<FuzzRequest> = fc.constant(render(valid, { mutation: "valid" }));
  for (const pick of picks) arbitrary = arbitrary.chain(CHAOS[pick]);
  return arbitrary;
});
