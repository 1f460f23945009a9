/**
 * The shared-state store the policy's `store` section names; the contract is in `types.ts`.
 */
import type { StoreSection } from "../sections/sections.ts";
import type { Store, StoreOptions } from "./types.ts";

/** Where the durable stores keep their files unless the policy names one (`store.path`). */
export function dataDir(): string {
  try {
    return Deno.env.get("GATEWAY_DATA_DIR") || "data";
  } catch {
    return "data";
  }
}

function onDeploy(): boolean {
  try {
    return Boolean(Deno.env.get("DENO_DEPLOYMENT_ID"));
  } catch {
    return false;
  }
}

/** Builds the store the policy's `store` section describes (connecting in the background). */
export async function createStore(
  section: StoreSection,
  options: StoreOptions = {},
): Promise<Store> {
  switch (section.kind) {
    case "memory": {
      // Said once at start: a container or a binary that runs this forgets every executed
      // X-Request-ID on restart, and a TPP's retry then runs the payment again.
      options.log?.info({
        level: "warn",
        msg:
          "store.kind is memory: X-Request-IDs, rate limits and consent counts are forgotten on restart (a retried payment then runs again); name sqlite, kv or redis to keep them",
        store: "memory",
      });
      const { MemoryStore } = await import("./memory.ts");
      return new MemoryStore({
        maxEntries: section.max_entries,
        maxBytes: section.max_bytes,
        ownerShare: section.owner_share,
        now: options.now,
        log: options.log,
      });
    }
    case "sqlite": {
      const { SqliteStore } = await import("./sqlite.ts");
      return new SqliteStore({
        path: section.path || `${dataDir()}/xs2a-edge.sqlite`,
        prefix: section.prefix,
        synchronous: section.synchronous,
        timeoutMs: section.timeout,
        log: options.log,
      });
    }
    case "kv": {
      const { kvStore } = await import("./kv.ts");
      const path = section.url || section.path ||
        (onDeploy() ? undefined : `${dataDir()}/xs2a-edge.kv`);
      return await kvStore({
        path,
        prefix: section.prefix,
        timeoutMs: section.timeout,
        log: options.log,
      });
    }
    case "redis": {
      if (section.cluster) {
        const { redisClusterStore } = await import("./redis_cluster.ts");
        return redisClusterStore(section, options);
      }
      const { redisStore } = await import("./redis.ts");
      return redisStore(section, options);
    }
    case "upstash": {
      const { upstashStore } = await import("./upstash.ts");
      return upstashStore(section, options);
    }
  }
}
