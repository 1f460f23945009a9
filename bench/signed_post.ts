/**
 * Signed-POST run: CPU per signed payment initiation (transport certificate, Digest and detached
 * JWS verified) against the same requests with those checks off, and the cost of one JWS
 * verification measured in the same run. Client, gateway and upstream share this process, so
 * the difference between the two runs is what the checks cost the gateway.
 *
 *   deno run -A bench/signed_post.ts [requests=500] [concurrency=8]
 */
import process from "node:process";
import { startGateway } from "../tests/support/gateway.ts";
import { startUpstream } from "../tests/support/upstream.ts";
import {
  jwsVerificationCost,
  PAYMENT_TARGET,
  signedPostFixture,
} from "../tests/support/signing.ts";

const total = Number(Deno.args[0] ?? 500);
const concurrency = Number(Deno.args[1] ?? 8);
const fixture = await signedPostFixture();
const requests: { path: string; init: RequestInit }[] = [];
for (let i = 0; i < total; i++) requests.push(await fixture.request());

// Only the who-is-calling checks differ; the request-hardening checks run in both.
const unchecked = `
upstream:
  url: \${UPSTREAM_URL}
defaults:
  tpp_certificate: { mode: "off" }
  digest: { mode: "off" }
  jws_signature: { mode: "off" }
`;

async function run(policy: string) {
  await using upstream = startUpstream(() => Response.json({ paymentId: "p-1" }, { status: 201 }));
  await using gateway = await startGateway({ policy, upstream: upstream.url });
  const warm = await fixture.request();
  await (await gateway.fetch(warm.path, warm.init)).body?.cancel();
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < requests.length) {
      const { path, init } = requests[next++];
      const response = await gateway.fetch(path, init);
      await response.body?.cancel();
      if (response.status !== 201) throw new Error(`status ${response.status}`);
    }
  }));
  const used = process.cpuUsage(cpu);
  const ms = performance.now() - started;
  return { cpuUsPerRequest: (used.user + used.system) / total, rps: total / (ms / 1000) };
}

const plain = await run(unchecked);
const signed = await run(fixture.policy);
const verification = await jwsVerificationCost(fixture, 300);
const row = (name: string, r: { cpuUsPerRequest: number; rps: number }) =>
  `${name.padEnd(34)} ${r.cpuUsPerRequest.toFixed(0).padStart(8)} µs CPU/request ${
    r.rps.toFixed(0).padStart(7)
  } req/s`;
console.log(`signed POST ${PAYMENT_TARGET}, ${total} requests, ${concurrency} at a time`);
console.log(row("checks off (same requests)", plain));
console.log(row("certificate + Digest + JWS on", signed));
console.log(
  `${"difference (the checks)".padEnd(34)} ${
    (signed.cpuUsPerRequest - plain.cpuUsPerRequest).toFixed(0).padStart(8)
  } µs CPU/request`,
);
console.log(
  `${"one JWS verification (PS256)".padEnd(34)} ${
    verification.cpuUs.toFixed(0).padStart(8)
  } µs CPU, ${
    (verification.meanMs * 1000).toFixed(0)
  } µs wall (mean of ${verification.iterations}, chain and key cached)`,
);
