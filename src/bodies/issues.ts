/**
 * Turns zod issues of a body schema into Berlin Group errors: `path` is the JSON path (for
 * example `creditorAccount.iban`, `items[0].amount`) and `text` says what was expected.
 *
 * Messages of the body schemas are phrases that finish a sentence ("must have at most 70
 * characters"); the field name is put in front here. A custom issue may choose another 400 code
 * than FORMAT_ERROR with `params: { code }` (EXECUTION_DATE_INVALID, PERIOD_INVALID).
 */
import type { z } from "zod";
import { type CodeFor, GatewayError } from "../psd2/errors.ts";

/** `["items", 0, "amount"]` to `items[0].amount`; the root is `body`. */
export function jsonPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    out += typeof part === "number" ? `[${part}]` : out === "" ? String(part) : `.${String(part)}`;
  }
  return out === "" ? "body" : out;
}

const TYPES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  null: "null",
};

function quoteList(values: readonly unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(", ");
}

/** The phrase of an issue that has no message of its own. */
export const phrase: z.core.$ZodErrorMap = (issue) => {
  const missing = issue.input === undefined &&
    (issue.code === "invalid_type" || issue.code === "invalid_value" ||
      issue.code === "invalid_union");
  if (missing) return "is required";
  switch (issue.code) {
    case "invalid_type":
      return `must be ${TYPES[issue.expected] ?? issue.expected}`;
    case "too_big": {
      const max = Number(issue.maximum);
      if (issue.origin === "string") return `must have at most ${max} characters`;
      if (issue.origin === "array") return `must have at most ${max} entries`;
      return issue.inclusive ? `must be at most ${max}` : `must be less than ${max}`;
    }
    case "too_small": {
      const min = Number(issue.minimum);
      if (issue.origin === "string") {
        return min <= 1 ? "must not be empty" : `must have at least ${min} characters`;
      }
      if (issue.origin === "array") {
        return min <= 1 ? "must not be empty" : `must have at least ${min} entries`;
      }
      return issue.inclusive ? `must be at least ${min}` : `must be greater than ${min}`;
    }
    case "invalid_value":
      return issue.values.length === 1
        ? `must be ${quoteList(issue.values)}`
        : `must be one of ${quoteList(issue.values)}`;
    case "invalid_format":
      return "has an invalid format";
    case "unrecognized_keys":
      return "is not a field of this body (unknown fields are rejected)";
    case "invalid_union":
      return "does not match any accepted form";
    default:
      return "is invalid";
  }
};

/** The Berlin Group error of the first issue; `within` names the body part it was found in. */
export function issueError(issue: z.core.$ZodIssue, within?: string): GatewayError {
  let path = within === undefined ? [...issue.path] : [within, ...issue.path];
  if (issue.code === "unrecognized_keys") path = [...path, issue.keys[0]];
  const where = jsonPath(path);
  const params = issue.code === "custom"
    ? issue.params as { code?: CodeFor<400> } | undefined
    : undefined;
  const text = where === "body"
    ? `The request body ${issue.message}`
    : `Field "${where}" ${issue.message}`;
  return new GatewayError(400, params?.code ?? "FORMAT_ERROR", text, {
    path: where,
  });
}

/**
 * Parses with a body schema; throws the first problem as a Berlin Group error. `within` names the
 * part of a multipart body the value is (paths then start with it).
 */
export function parseBody<T>(schema: z.ZodType<T>, value: unknown, within?: string): T {
  // A valid body is the value itself (no body schema transforms): a compiled schema (`z.compile`)
  // checks it without building a copy; only an invalid one is parsed again for its issue.
  if (schema.validate(value)) return value as T;
  const result = schema.safeParse(value, { error: phrase });
  if (!result.success) throw issueError(result.error.issues[0], within);
  return result.data;
}
