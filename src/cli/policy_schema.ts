/**
 * `deno task policy:schema`: writes the policy file's JSON Schema (generated from the zod schema)
 * to config/policy.schema.json, where editors find it.
 */
import { policyJsonSchema } from "../policy.ts";

const target = Deno.args[0] ?? "config/policy.schema.json";
await Deno.writeTextFile(target, policyJsonSchema());
console.log(`wrote ${target}`);
