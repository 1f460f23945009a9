import assert from "node:assert/strict";
import { PIPELINE } from "../../../middleware/mod.ts";
import { PolicyError } from "../../../src/policy/load.ts";
import { servicesShapedBy, validatePolicy } from "../../../src/policy/validate.ts";

const env = (name: string) =>
  ({ UPSTREAM_URL: "http://127.0.0.1:9", STORE_URL: "redis://127.0.0.1:9" } as Record<
    string,
    string
  >)[name];

/** A policy with a cluster store (of `prefix`) and a limit by client address alone. */
function clusterPolicy(prefix: string): string {
  return `upstream:
  url: \${UPSTREAM_URL}
store:
  kind: redis
  url: \${STORE_URL}
  cluster: true
  prefix: "${prefix}"
defaults:
  rate_limit:
    limits:
      per_client: { key: [client_ip], limit: 10, window: 1m }
`;
}

Deno.test("validatePolicy() refuses a limit that a Redis Cluster store cannot count, once", async () => {
  const error = await validatePolicy("c.yaml", clusterPolicy("xs2a:"), { ...PIPELINE, env })
    .then(() => undefined, (error) => error);
  assert.ok(error instanceof PolicyError, String(error));
  // Every operation's chain refuses alike: the problem is listed once.
  assert.equal(error.problems.length, 1, error.problems.join("\n"));
  assert.match(
    error.problems[0],
    /^rate_limit\.limits\.per_client: key \[client_ip\] does not count by tpp/,
  );
});

Deno.test("validatePolicy() accepts the same limit when the cluster prefix holds a hash tag", async () => {
  const policy = await validatePolicy("c.yaml", clusterPolicy("{xs2a}:"), { ...PIPELINE, env });
  assert.equal(policy.store.cluster, true);
});

Deno.test("servicesShapedBy() gives the store's kind, and tagged keys only on a cluster without a tag", async () => {
  const base = { url: "redis://127.0.0.1:9", token: "", timeout: 500, nodes: [] };
  const store = (fields: Record<string, unknown>) =>
    // deno-lint-ignore no-explicit-any
    ({ kind: "redis", cluster: false, prefix: "xs2a:", ...base, ...fields }) as any;
  assert.equal((await servicesShapedBy(store({ cluster: true }))).store.tagKeys, true);
  assert.equal(
    (await servicesShapedBy(store({ cluster: true, prefix: "{x}:" }))).store.tagKeys,
    false,
  );
  assert.equal((await servicesShapedBy(store({}))).store.tagKeys, false);
  assert.equal((await servicesShapedBy(store({ kind: "memory" }))).store.kind, "memory");
});
