/**
 * The environment variables the entry points read (main.ts, serve.ts; the sandbox's own are in
 * src/sandbox/serve.ts), as one zod schema each: every variable with its default and its form, read once, so
 * that `PORT=abc` stops start-up with a message naming the variable instead of serving on NaN.
 *
 * Variables the policy file references (`${UPSTREAM_URL}`, `${METRICS_PORT:-}`, ...) are checked
 * where the policy uses them, by the policy's own field types.
 */
import { z } from "zod";
import { port } from "../lib/fields.ts";

/** An empty variable counts as unset, as `${NAME:-default}` treats it in the policy file. */
export function unsetWhenEmpty<T extends z.ZodType>(schema: T) {
  return z.preprocess((v) => (v === "" ? undefined : v), schema);
}

/** The variables of the gateway (main.ts; serve.ts reads GATEWAY_POLICY only). */
export const gatewayEnv = z.object({
  PORT: unsetWhenEmpty(port({ anyFree: true }).default(8080)).describe(
    "Port the gateway listens on (0: any free port)",
  ),
  HOST: unsetWhenEmpty(z.string().default("127.0.0.1")).describe(
    "Address the gateway listens on; 0.0.0.0 in a container",
  ),
  GATEWAY_POLICY: unsetWhenEmpty(z.string().default("config/policy.yaml")).describe(
    "The policy file, unless --policy names one",
  ),
  GATEWAY_WATCH: unsetWhenEmpty(
    z.enum(["true", "false"], { error: 'must be "true" or "false"' }).default("true"),
  ).transform((value) => value === "true").describe(
    "Reload the policy when its file changes (SIGHUP always does)",
  ),
  SHUTDOWN_GRACE_MS: unsetWhenEmpty(
    z.string().regex(/^[0-9]{1,9}$/, "must be a whole number of milliseconds").default("10000"),
  ).transform(Number).describe(
    "How long SIGTERM and SIGINT wait for requests in flight, in milliseconds",
  ),
});

/** Environment variables that cannot be used; `problems` names each. */
export class EnvError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.join("\n"));
    this.name = "EnvError";
    this.problems = problems;
  }
}

/**
 * Reads the variables of `schema` (each by name, so `--allow-env` may list just them); throws
 * {@link EnvError} naming every variable that is not of its form.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EnvError, gatewayEnv, readEnv } from "./env.ts";
 *
 * const env: Record<string, string> = { PORT: "8080" };
 * assert.equal(readEnv(gatewayEnv, (name) => env[name]).PORT, 8080);
 * env.PORT = "abc";
 * assert.throws(() => readEnv(gatewayEnv, (name) => env[name]), EnvError);
 * ```
 */
export function readEnv<Shape extends z.ZodRawShape>(
  schema: z.ZodObject<Shape>,
  get: (name: string) => string | undefined = (name) => Deno.env.get(name),
): z.output<z.ZodObject<Shape>> {
  const raw = Object.fromEntries(Object.keys(schema.shape).map((name) => [name, get(name)]));
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new EnvError(parsed.error.issues.map((issue) => {
    const name = String(issue.path[0]);
    return `Environment variable "${name}" ${issue.message}, got "${raw[name]}"`;
  }));
}
