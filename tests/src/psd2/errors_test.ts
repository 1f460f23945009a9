import assert from "node:assert/strict";
import { CODES, GatewayError, OWN_CODES, STANDARD_CODES } from "../../../src/psd2/errors.ts";

/**
 * The standard's codes per status (Berlin Group NextGenPSD2 1.3.x), copied independently of
 * src/psd2/errors.ts from the reference table (shared/REFERENCE.md, "Berlin Group error model").
 */
const STANDARD: Record<number, string[]> = {
  400: [
    "FORMAT_ERROR",
    "PARAMETER_NOT_CONSISTENT",
    "PARAMETER_NOT_SUPPORTED",
    "SERVICE_INVALID",
    "RESOURCE_UNKNOWN",
    "RESOURCE_EXPIRED",
    "RESOURCE_BLOCKED",
    "TIMESTAMP_INVALID",
    "PERIOD_INVALID",
    "SCA_METHOD_UNKNOWN",
    "SCA_INVALID",
    "CONSENT_UNKNOWN",
    "PAYMENT_FAILED",
    "EXECUTION_DATE_INVALID",
  ],
  401: [
    "CERTIFICATE_INVALID",
    "ROLE_INVALID",
    "CERTIFICATE_EXPIRED",
    "CERTIFICATE_BLOCKED",
    "CERTIFICATE_REVOKED",
    "CERTIFICATE_MISSING",
    "SIGNATURE_INVALID",
    "SIGNATURE_MISSING",
    "CORPORATE_ID_INVALID",
    "PSU_CREDENTIALS_INVALID",
    "CONSENT_INVALID",
    "CONSENT_EXPIRED",
    "TOKEN_UNKNOWN",
    "TOKEN_INVALID",
    "TOKEN_EXPIRED",
  ],
  403: [
    "CONSENT_UNKNOWN",
    "SERVICE_BLOCKED",
    "RESOURCE_UNKNOWN",
    "RESOURCE_EXPIRED",
    "PRODUCT_INVALID",
  ],
  404: ["RESOURCE_UNKNOWN", "PRODUCT_UNKNOWN"],
  405: ["SERVICE_INVALID", "CANCELLATION_INVALID"],
  406: ["REQUESTED_FORMATS_INVALID"],
  409: ["STATUS_INVALID"],
  429: ["ACCESS_EXCEEDED"],
};

/** Statuses the interface lists (or the gateway needs) without a code list of the standard. */
const WITHOUT_LIST = [408, 413, 415, 500, 503];

/** Whether a status answers with a code. */
function allowed(status: number, code: string): boolean {
  return ((CODES as Record<number, readonly string[]>)[status] ?? []).includes(code);
}

Deno.test("STANDARD_CODES are the standard's codes per status, nothing added", () => {
  assert.deepEqual(
    Object.fromEntries(Object.entries(STANDARD_CODES).map(([s, c]) => [s, [...c].sort()])),
    Object.fromEntries(Object.entries(STANDARD).map(([s, c]) => [s, [...c].sort()])),
  );
});

Deno.test("OWN_CODES cover only statuses without a standard code list, each documented", async () => {
  const doc = await Deno.readTextFile("docs/interoperability.md");
  const section = doc.split("## Error codes")[1]?.split("\n## ")[0] ?? "";
  assert.ok(section.length > 0, 'docs/interoperability.md has an "Error codes" section');
  for (const [status, codes] of Object.entries(OWN_CODES)) {
    assert.ok(WITHOUT_LIST.includes(Number(status)), `${status} has a standard code list`);
    for (const code of codes) {
      assert.match(
        section,
        new RegExp(`\\| ${status}\\s*\\|[^\\n]*\`${code}\``),
        `${status} ${code}`,
      );
    }
  }
});

/** A file's text without comments (a code quoted in a comment is no answer). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

/** Every gateway source file: src/ but the sandbox bank, and middleware/. */
async function* gatewaySources(): AsyncGenerator<[string, string]> {
  for (const root of ["src", "middleware"]) {
    const stack = [root];
    while (stack.length > 0) {
      const dir = stack.pop()!;
      for await (const entry of Deno.readDir(dir)) {
        const path = `${dir}/${entry.name}`;
        if (entry.isDirectory && path !== "src/sandbox") stack.push(path);
        else if (entry.isFile && path.endsWith(".ts")) {
          yield [path, code(await Deno.readTextFile(path))];
        }
      }
    }
  }
}

/**
 * The (status, code) pairs a source builds, by the shapes errors are built in: the constructor,
 * the 400 FORMAT_ERROR shorthands, a body schema issue's 400 code, the bearer check's 401
 * rejections and the proxy's 503s.
 */
function pairsIn(text: string): [number, string, string][] {
  const found: [number, string, string][] = [];
  const shapes: [RegExp, (m: RegExpMatchArray) => [number, string]][] = [
    [/GatewayError\(\s*(\d{3}),\s*"([A-Z_]+)"/g, (m) => [Number(m[1]), m[2]]],
    [/\b(formatError|headerError|missingHeader)\(/g, () => [400, "FORMAT_ERROR"]],
    [/params: \{ code: "([A-Z_]+)" \}/g, (m) => [400, m[1]]],
    [/rejection\(\s*realm,\s*"([A-Z_]+)"/g, (m) => [401, m[1]]],
    [/unavailable\(\s*"([A-Z_]+)"/g, (m) => [503, m[1]]],
  ];
  for (const [shape, pair] of shapes) {
    for (const match of text.matchAll(shape)) found.push([...pair(match), match[0]]);
  }
  return found;
}

Deno.test("every error the gateway's source builds carries a code of its status", async () => {
  const seen = new Set<string>();
  let sites = 0;
  for await (const [path, text] of gatewaySources()) {
    for (const [status, code, site] of pairsIn(text)) {
      sites++;
      seen.add(`${status} ${code}`);
      assert.ok(allowed(status, code), `${path}: ${site} (${code} is no code of ${status})`);
    }
  }
  // The walk finds the gateway's errors (it would pass vacuously if the shapes changed).
  assert.ok(sites > 60, `only ${sites} error sites found`);
  for (const pair of ["401 TOKEN_EXPIRED", "503 UPSTREAM_TIMEOUT", "400 EXECUTION_DATE_INVALID"]) {
    assert.ok(seen.has(pair), `${pair} not found by the walk`);
  }
});

Deno.test("GatewayError takes only a code of its status (checked by the compiler)", () => {
  const error = new GatewayError(404, "PRODUCT_UNKNOWN", 'Payment product "x" is unknown');
  assert.equal(error.status, 404);
  // @ts-expect-error: FORMAT_ERROR is no 401 code.
  const wrong = new GatewayError(401, "FORMAT_ERROR", "x");
  assert.equal(allowed(wrong.status, wrong.code), false);
  // @ts-expect-error: 418 is no status of the interface.
  assert.equal(allowed(new GatewayError(418, "FORMAT_ERROR", "x").status, "FORMAT_ERROR"), false);
});

Deno.test("GatewayError cuts a text over 500 characters", () => {
  const error = new GatewayError(400, "FORMAT_ERROR", "x".repeat(600));
  assert.equal(error.message.length, 500);
  assert.ok(error.message.endsWith("..."));
});
