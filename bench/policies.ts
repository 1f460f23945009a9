/**
 * The bench's policy files. No check may reject a request the load generator sends unless the
 * scenario is about rejection: the default policy's `per_tpp` limit (100000 a minute) is reached
 * by wrk within a round, and rejected requests are cheaper than forwarded ones. So the bench runs
 * the default policy with that limit out of reach and a memory store large enough to keep every
 * answer of a long run (an X-Request-ID record is never evicted inside its retention).
 */
import { passthroughPolicy, policyYaml } from "../tests/support/policies.ts";
import type { SignedPostFixture } from "../tests/support/signing.ts";

const root = new URL("..", import.meta.url).pathname;

/** Limits no bench run reaches, and room for every answer of 1M+ writes. */
const OUT_OF_REACH = "limit: 1000000000\n";
const STORE_ROOM = "  max_entries: 8000000\n  max_bytes: 17179869184\n";

async function write(text: string): Promise<string> {
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.writeTextFile(file, text);
  return file;
}

/** config/policy.yaml, its rate limit out of reach and its memory store large. */
export async function defaultPolicyFile(): Promise<string> {
  const text = await Deno.readTextFile(`${root}config/policy.yaml`);
  const limited = text.replace(/limit: 100000\n/, OUT_OF_REACH).replace(
    /\nstore:\n/,
    `\nstore:\n${STORE_ROOM}`,
  );
  if (limited === text || !limited.includes(OUT_OF_REACH)) {
    throw new Error("config/policy.yaml changed: the bench cannot lift its per_tpp limit");
  }
  return await write(limited);
}

/**
 * The default policy of {@link defaultPolicyFile} with the features of issue 21 switched on:
 * `upstream_limits` (a pool of 100000 in flight: never reached, nothing queues),
 * `upstream_circuit` (opens after 50 failures in a row: none happen), `consent_scope` (enforce)
 * and `catalogue_cache` (60 s for the product catalogue, its only group). What the bench's
 * requests pay for them is what they cost a request that none of them refuses.
 */
export async function featuresPolicyFile(): Promise<string> {
  const text = await Deno.readTextFile(await defaultPolicyFile());
  if (/^groups:/m.test(text)) throw new Error("config/policy.yaml has groups: adapt the bench");
  const on = text.replace(
    /\ndefaults:\n/,
    "\ndefaults:\n" +
      "  upstream_limits: { max_in_flight: 100000 }\n" +
      "  upstream_circuit: { failures: 50 }\n" +
      "  consent_scope: { mode: enforce }\n",
  );
  if (on === text) throw new Error("config/policy.yaml changed: the bench cannot add its features");
  return await write(`${on}\ngroups:\n  products:\n    catalogue_cache: { ttl: 60s }\n`);
}

/**
 * The default policy of {@link defaultPolicyFile} without the two checks a payment initiation
 * pays for beyond a read: `body_schema` and `idempotency` off for `initiatePayment`. Not a
 * configuration to run: the row measures what the rest of the chain costs a POST, the floor under
 * the write rows' ratios.
 */
export async function writeFloorPolicyFile(): Promise<string> {
  const text = await Deno.readTextFile(await defaultPolicyFile());
  if (/^operations:/m.test(text)) {
    throw new Error("config/policy.yaml has operations: adapt the bench");
  }
  return await write(
    `${text}\noperations:\n  initiatePayment:\n` +
      `    body_schema: { mode: "off" }\n    idempotency: { mode: "off" }\n`,
  );
}

/** A policy with every check that has a mode switched off and no link rewriting. */
export async function passthroughPolicyFile(): Promise<string> {
  return await write(policyYaml(passthroughPolicy({ defaults: { links: { rewrite: false } } })));
}

/**
 * The signed-POST fixture's policy (transport certificate, Digest and JWS required on payment
 * initiations), idempotency as configured by default (writes replayed), the rate limit out of
 * reach.
 */
export async function signedPolicyFile(fixture: SignedPostFixture): Promise<string> {
  return await write(
    fixture.policy.replace(
      "trust:\n",
      `metrics:\n  token: \${METRICS_TOKEN}\nstore:\n  kind: memory\n${STORE_ROOM}trust:\n`,
    ).replace(
      "defaults:\n",
      "defaults:\n  rate_limit: { limits: { per_tpp: { key: [tpp], limit: 1000000000, window: 1m } } }\n",
    ),
  );
}

/**
 * The default policy of {@link defaultPolicyFile} naming itself as its shadow candidate
 * (src/policy/shadow.ts): every request is judged twice and no decision differs, so the row
 * measures what judging costs a request, not what logging a difference does.
 */
export async function shadowPolicyFile(): Promise<string> {
  const file = await defaultPolicyFile();
  return await write(`${await Deno.readTextFile(file)}\nshadow: ${file}\n`);
}

/**
 * config/production.example.yaml as a bank runs it, with what the bench must put in place of its
 * placeholders and nothing else: the terminator is the load generator on 127.0.0.1 (the example
 * lists placeholder addresses), and the rate limits (`per_tpp` 6000, `per_psu` 120 and the
 * catalogue's `per_client` 600 a minute) are out of reach, as in every bench policy. Everything
 * else comes from the environment the example names (bench/production.ts sets it).
 */
export async function productionPolicyFile(): Promise<string> {
  const text = await Deno.readTextFile(`${root}config/production.example.yaml`);
  let changed = text.replace(/^( {2}terminators: )\[[^\]]*\]/m, "$1[127.0.0.1/32]");
  if (changed === text) {
    throw new Error("config/production.example.yaml changed: the bench cannot set its terminator");
  }
  for (const limit of ["6000", "120", "600"]) {
    const lifted = changed.replace(
      new RegExp(`^( +)limit: ${limit}\\n`, "m"),
      (_, indent) => `${indent}${OUT_OF_REACH}`,
    );
    if (lifted === changed) {
      throw new Error(
        `config/production.example.yaml changed: the bench cannot lift its limit of ${limit}`,
      );
    }
    changed = lifted;
  }
  return await write(changed);
}
