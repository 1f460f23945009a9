/**
 * The cases file of `policy:test`: requests (an operation or a path, headers, a body, the caller's
 * certificate and token) and what the gateway must answer (status, Berlin Group code, the checks'
 * findings). Parsed with zod, so that a typo in a case is an error that names it, never a case
 * that silently expects nothing.
 */
import { z } from "zod";
import { parse } from "yaml";
import { dirname, isAbsolute, join } from "node:path";
import { DEFAULT_HEADER } from "../pki/client_cert.ts";
import type { ResolvedOperation } from "../policy/load.ts";

const headers = z.record(z.string(), z.union([z.string(), z.null()])).default({}).describe(
  "Request headers; null removes a header the runner would add (X-Request-ID, Content-Type)",
);

const expectedFinding = z.object({
  check: z.string().min(1),
  mode: z.enum(["enforce", "report"]).optional(),
  code: z.string().optional(),
}).strict();

const caseSchema = z.object({
  name: z.string().min(1),
  operation: z.string().optional().describe("The operationId; its path is built from params"),
  method: z.string().optional().describe("With path: the request's method (default GET)"),
  path: z.string().optional().describe("The request path as sent, query included"),
  params: z.record(z.string(), z.string()).default({}),
  query: z.string().optional().describe("Appended to the operation's path after ?"),
  headers,
  body: z.unknown().optional().describe("An object (sent as JSON) or a string (sent as is)"),
  certificate: z.string().optional().describe(
    "A PEM file (relative to the cases file) sent in the policy's client-certificate header",
  ),
  token: z.string().optional().describe("Sent as Authorization: Bearer <token>"),
  peer: z.string().optional().describe("The address the request comes from"),
  expect: z.object({
    status: z.number().int(),
    code: z.string().optional(),
    findings: z.array(expectedFinding).optional().describe(
      "Findings that must be among the request's ([] means none at all)",
    ),
    reaches_core: z.boolean().optional(),
  }).strict(),
}).strict().refine((c) => (c.operation === undefined) !== (c.path === undefined), {
  message: "A case names either an operation or a path",
});

/** One case as parsed. */
export type PolicyCase = z.output<typeof caseSchema>;

const casesSchema = z.object({
  env: z.record(z.string(), z.string()).default({}).describe(
    "Values of the policy's ${NAME} references for this test (UPSTREAM_URL is the stand-in core)",
  ),
  headers,
  cases: z.array(caseSchema).min(1),
}).strict();

/** A cases file as parsed. */
export type PolicyCases = z.output<typeof casesSchema> & { file: string };

/** The outcome of one case. */
export interface CaseResult {
  file: string;
  name: string;
  /** What differed from the expectation; empty when the case passed. */
  misses: string[];
  ms: number;
}

/** A cases file that cannot be used; `problems` names each case and field. */
export class CasesError extends Error {
  constructor(readonly file: string, readonly problems: string[]) {
    super(`Cases file "${file}" is invalid:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "CasesError";
  }
}

/** Reads and validates a cases file; throws {@link CasesError}. */
export async function readCases(file: string): Promise<PolicyCases> {
  let raw: unknown;
  try {
    raw = parse(await Deno.readTextFile(file));
  } catch (error) {
    throw new CasesError(file, [(error as Error).message.split("\n")[0]]);
  }
  const parsed = casesSchema.safeParse(raw);
  if (!parsed.success) {
    throw new CasesError(
      file,
      parsed.error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`),
    );
  }
  return { ...parsed.data, file };
}

/** A path parameter's value when the case gives none: one the policy accepts. */
function paramValue(name: string, resolved: ResolvedOperation): string {
  const rule = resolved.operation.params[name];
  if (name === "payment-product") {
    const offered = resolved.options.path_params?.offered_products as string[] | undefined;
    return offered?.[0] ?? rule.values?.[0] ?? "domestic";
  }
  return rule.values?.[0] ?? crypto.randomUUID();
}

/** The request of a case, as the TLS terminator would pass it on. */
export async function caseRequest(
  item: PolicyCase,
  cases: PolicyCases,
  operations: readonly ResolvedOperation[],
): Promise<Request> {
  let method = (item.method ?? "GET").toUpperCase();
  let path = item.path ?? "";
  let resolved: ResolvedOperation | undefined;
  if (item.operation !== undefined) {
    resolved = operations.find((r) => r.operation.id === item.operation);
    if (!resolved) {
      throw new CasesError(cases.file, [`${item.name}: unknown operation "${item.operation}"`]);
    }
    method = resolved.operation.method;
    path = resolved.operation.path.replace(
      /\{([^}]+)\}/g,
      (_, name: string) => encodeURIComponent(item.params[name] ?? paramValue(name, resolved!)),
    );
    if (item.query) path += `?${item.query}`;
  }
  const out = new Headers({ "x-request-id": crypto.randomUUID() });
  let body: string | undefined;
  if (item.body !== undefined) {
    body = typeof item.body === "string" ? item.body : JSON.stringify(item.body);
    if (typeof item.body !== "string") out.set("content-type", "application/json");
  }
  if (item.token !== undefined) out.set("authorization", `Bearer ${item.token}`);
  if (item.certificate !== undefined) {
    const file = isAbsolute(item.certificate)
      ? item.certificate
      : join(dirname(cases.file), item.certificate);
    const pem = await Deno.readTextFile(file);
    const options = (resolved?.options.tpp_certificate ?? {}) as { form?: string; header?: string };
    const form = (options.form ?? "nginx") as keyof typeof DEFAULT_HEADER;
    out.set(options.header ?? DEFAULT_HEADER[form], certificateHeader(pem, form));
  }
  for (const [name, value] of Object.entries({ ...cases.headers, ...item.headers })) {
    if (value === null) out.delete(name);
    else out.set(name, value);
  }
  if (body !== undefined && !out.has("content-length")) {
    out.set("content-length", String(new TextEncoder().encode(body).byteLength));
  } else if (body === undefined && ["POST", "PUT", "PATCH"].includes(method)) {
    out.set("content-length", "0");
  }
  out.set("host", "gateway.test");
  return new Request(new URL(path, "http://gateway.test"), { method, headers: out, body });
}

/** The certificate as a TLS terminator of that form forwards it. */
function certificateHeader(pem: string, form: keyof typeof DEFAULT_HEADER): string {
  if (form === "nginx") return encodeURIComponent(pem.trim());
  if (form === "envoy") return `Cert="${encodeURIComponent(pem.trim())}"`;
  const base64 = pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  return `:${base64}:`;
}
