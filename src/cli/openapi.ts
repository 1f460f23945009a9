/**
 * `deno task openapi [policy file] > openapi.json`: prints the OpenAPI 3.1 document of the
 * interface as the policy serves it (the same document as `GET /openapi.json`).
 */
import type { Pipeline } from "../core/chain.ts";
import { loadPolicy, PolicyError } from "../policy/load.ts";
import { openApiDocument } from "../http/openapi.ts";
import { earliestToday } from "../lib/dates.ts";

/** Prints the document of the policy file in `args` (default config/policy.yaml). */
export async function openApi(args: string[], pipeline: Pipeline): Promise<number> {
  const file = args[0] ?? Deno.env.get("GATEWAY_POLICY") ?? "config/policy.yaml";
  try {
    const policy = await loadPolicy(file, {
      ...pipeline,
      // The document does not depend on where the bank is: unset URLs get a placeholder.
      placeholder: (name) => name.endsWith("_URL") ? "http://upstream.invalid" : `\${${name}}`,
    });
    console.log(JSON.stringify(openApiDocument(policy, earliestToday(Date.now())), null, 2));
    return 0;
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    console.error(error.message);
    return 1;
  }
}
