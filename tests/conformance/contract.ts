/**
 * The gateway's published contract as a test oracle: the document a gateway serves at
 * `/openapi.json`, its operations found by method and path, and answers validated against the
 * document's response schemas with an independent JSON Schema validator (ajv, draft 2020-12).
 * The e2e flows check every answer with it (tests/e2e/flow.ts).
 */
import assert from "node:assert/strict";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

// deno-lint-ignore no-explicit-any
type Json = any;

/** An operation of the document, with its path template. */
export interface ContractOperation {
  template: string;
  method: string;
  entry: Json;
}

/** What an answer is, for the check. */
export interface Answered {
  status: number;
  headers: Headers;
  body: unknown;
}

/** A template as a regular expression over a request path. */
function matcher(template: string): RegExp {
  const source = template.split(/\{[^}]+\}/).map((part) =>
    part.replace(/[.*+?^$()|[\]\\]/g, "\\$&")
  )
    .join("[^/]+");
  return new RegExp(`^${source}$`);
}

/** Literal segments first, as the gateway's router orders templates. */
function literals(template: string): number {
  return template.split("/").filter((segment) => segment !== "" && !segment.startsWith("{"))
    .length;
}

/** A contract document with a validator for its schemas. */
export class Contract {
  readonly document: Json;
  // deno-lint-ignore no-explicit-any
  readonly #ajv: any;
  readonly #templates: { template: string; pattern: RegExp }[];
  // deno-lint-ignore no-explicit-any
  readonly #compiled = new Map<string, any>();

  constructor(document: Json) {
    this.document = document;
    // deno-lint-ignore no-explicit-any
    this.#ajv = new (Ajv2020 as any)({ strict: false, allErrors: true });
    // deno-lint-ignore no-explicit-any
    (addFormats as any)(this.#ajv);
    this.#ajv.addSchema(document, "openapi.json");
    this.#templates = Object.keys(document.paths)
      .sort((a, b) => literals(b) - literals(a))
      .map((template) => ({ template, pattern: matcher(template) }));
  }

  /** The document a gateway serves. */
  static async of(fetcher: { fetch(path: string): Promise<Response> }): Promise<Contract> {
    const response = await fetcher.fetch("/openapi.json");
    assert.equal(response.status, 200);
    return new Contract(await response.json());
  }

  /** The operation serving `method path` (the path without its query). */
  operation(method: string, path: string): ContractOperation | undefined {
    const bare = path.split("?")[0];
    for (const { template, pattern } of this.#templates) {
      const entry = this.document.paths[template][method.toLowerCase()];
      if (entry && pattern.test(bare)) return { template, method, entry };
    }
    return undefined;
  }

  /** Resolves a `$ref` of the document (one level). */
  resolve(value: Json): Json {
    if (!value?.$ref) return value;
    const parts = String(value.$ref).replace(/^#\//, "").split("/");
    return parts.reduce((node: Json, part: string) => node?.[part], this.document);
  }

  /** The problems of `value` under a schema of the document, or [] when it is valid. */
  problems(schema: Json, value: unknown): string[] {
    const key = JSON.stringify(schema);
    let validate = this.#compiled.get(key);
    if (!validate) {
      validate = this.#ajv.compile(wrap(schema));
      this.#compiled.set(key, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e: Json) => `${e.instancePath || "/"} ${e.message}`);
  }

  /** Asserts that an answer is one the document describes for `method path`. */
  assertAnswer(method: string, path: string, answer: Answered): void {
    const where = `${method} ${path} -> ${answer.status}`;
    const operation = this.operation(method, path);
    assert.ok(operation, `${where}: no operation of the contract`);
    const response = this.resolve(operation.entry.responses[String(answer.status)]);
    assert.ok(response, `${where}: status not in the contract (${operation.entry.operationId})`);
    assert.match(
      answer.headers.get("x-request-id") ?? "",
      /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
      `${where}: X-Request-ID`,
    );
    const schema = response.content?.["application/json"]?.schema;
    if (!schema) {
      assert.equal(answer.body, undefined, `${where}: a body the contract does not describe`);
      return;
    }
    const problems = this.problems(schema, answer.body);
    assert.deepEqual(
      problems,
      [],
      `${where} (${operation.entry.operationId}) does not fit the contract: ${
        JSON.stringify(answer.body).slice(0, 600)
      }`,
    );
  }
}

/** A schema of the document made absolute: its local refs point into the added document. */
function wrap(schema: Json): Json {
  return JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', '"$ref":"openapi.json#/'));
}

const contracts = new Map<string, Promise<Contract>>();

/** The contract of a gateway, fetched once per gateway. */
export function contractOf(
  gateway: { url: string; fetch(path: string): Promise<Response> },
): Promise<Contract> {
  let contract = contracts.get(gateway.url);
  if (!contract) {
    contract = Contract.of(gateway);
    contracts.set(gateway.url, contract);
  }
  return contract;
}
