/**
 * `deno run -A bench/shadow_cost.ts`: what a shadow policy costs a request, in one process, away
 * from the network's noise: the default policy's app and the same policy naming itself as its
 * shadow candidate (`shadowPolicyFile`) answer the same reads and payment initiations through
 * `app.fetch`, in front of the stand-in core on 127.0.0.1, in interleaved batches; the best batch
 * of each counts (a shared machine slows batches, never speeds them up).
 *
 * Environment: SHADOW_BATCHES (default 20), SHADOW_BATCH (requests per batch, default 400).
 */
import { PIPELINE } from "../middleware/mod.ts";
import { createApp } from "../src/http/app.ts";
import { parsePolicy } from "../src/policy/load.ts";
import { defaultServices } from "../src/policy/services.ts";
import { memoryLogger } from "../src/lib/log.ts";
import { readPolicyFiles } from "../src/lib/policy_files.ts";
import { startStandInCore } from "../src/cli/stand_in_core.ts";
import { createUpstream } from "../src/upstream/mod.ts";
import { initiationHeaders, singlePayment } from "../tests/support/requests.ts";
import { defaultPolicyFile, shadowPolicyFile } from "./policies.ts";

const batches = Number(Deno.env.get("SHADOW_BATCHES") ?? 20);
const size = Number(Deno.env.get("SHADOW_BATCH") ?? 400);
await using core = startStandInCore();
const env = (name: string) => name === "UPSTREAM_URL" ? core.url : Deno.env.get(name);

async function app(file: string) {
  const text = await Deno.readTextFile(file);
  await readPolicyFiles(text, env);
  const policy = parsePolicy(file, text, { ...PIPELINE, env });
  const services = defaultServices({
    log: memoryLogger(),
    upstream: createUpstream(policy.upstream),
  });
  return createApp({ policy, services });
}

const apps = {
  default: await app(await defaultPolicyFile()),
  shadow: await app(await shadowPolicyFile()),
};
const peer = {
  remoteAddr: { transport: "tcp" as const, hostname: "127.0.0.1", port: 40000 },
  completed: Promise.resolve(),
};
const body = JSON.stringify(singlePayment());

function request(kind: "read" | "write"): Request {
  const id = crypto.randomUUID();
  if (kind === "read") {
    return new Request("http://gateway.test/v1/accounts", {
      headers: { "x-request-id": id, "consent-id": "c-1", "psu-ip-address": "192.0.2.10" },
    });
  }
  return new Request("http://gateway.test/v1/payments/sepa-credit-transfers", {
    method: "POST",
    headers: { ...initiationHeaders(), "x-request-id": id, "content-length": String(body.length) },
    body,
  });
}

const best: Record<string, number> = {};
for (let b = 0; b < batches; b++) {
  for (const kind of ["read", "write"] as const) {
    for (const [name, gateway] of Object.entries(apps)) {
      const started = performance.now();
      for (let i = 0; i < size; i++) {
        const response = await gateway.fetch(request(kind), peer);
        if (response.status >= 400) throw new Error(`${name} ${kind}: ${response.status}`);
        await response.arrayBuffer();
      }
      const us = (performance.now() - started) * 1000 / size;
      const key = `${kind}, ${name}`;
      best[key] = Math.min(best[key] ?? Infinity, us);
    }
  }
}
for (const kind of ["read", "write"]) {
  const off = best[`${kind}, default`];
  const on = best[`${kind}, shadow`];
  console.log(
    `${kind.padEnd(6)} default ${off.toFixed(0)} us/request, with shadow ${
      on.toFixed(0)
    } us/request: +${(on - off).toFixed(0)} us (${(on / off).toFixed(2)}x)`,
  );
}
