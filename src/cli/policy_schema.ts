/**
 * `deno task policy:schema`: writes the policy file's JSON Schema (generated from the zod schema)
 * to config/policy.schema.json, where editors find it, and the TPP register's to
 * config/tpp_register.schema.json.
 */
import type { Pipeline } from "../core/chain.ts";
import { policyJsonSchema } from "../policy/load.ts";
import { REGISTER_SCHEMA_FILE, registerJsonSchema } from "../pki/register.ts";

/** Writes the schema to the file named in `args` (default: config/policy.schema.json). */
export async function policySchemaFile(args: string[], pipeline: Pipeline): Promise<number> {
  const target = args[0] ?? "config/policy.schema.json";
  await Deno.writeTextFile(target, policyJsonSchema(pipeline));
  console.log(`wrote ${target}`);
  if (args[0] === undefined) {
    await Deno.writeTextFile(REGISTER_SCHEMA_FILE, registerJsonSchema());
    console.log(`wrote ${REGISTER_SCHEMA_FILE}`);
  }
  return 0;
}
