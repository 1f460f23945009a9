/**
 * The shared-state store the policy's `store` section names; the contract is in `types.ts`.
 */
import type { StoreSection } from "../policy/sections.ts";
import type { Store, StoreOptions } from "./types.ts";

/** Builds the store the policy's `store` section describes (connecting in the background). */
export async function createStore(
  section: StoreSection,
  options: StoreOptions = {},
): Promise<Store> {
  switch (section.kind) {
    case "memory": {
      const { MemoryStore } = await import("./memory.ts");
      return new MemoryStore({
        maxEntries: section.max_entries,
        maxBytes: section.max_bytes,
        now: options.now,
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
