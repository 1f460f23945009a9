import { createStore } from "./src/store/mod.ts";
import { storeSection } from "./src/sections.ts";
import { startRedisServer } from "./tests/support/redis.ts";
const redis = await startRedisServer();
const store = await createStore(
  storeSection.parse({ kind: "redis", url: redis.url, timeout_ms: 200 }),
);
console.log(await store.decide({ limits: [] }));
redis.freeze(true);
let t = performance.now();
await store.decide({ limits: [] }).catch((e) => console.log("rejected", String(e).slice(0, 100)));
console.log("decided", performance.now() - t);
redis.freeze(false);
t = performance.now();
console.log(await store.decide({ limits: [] }).catch((e) => String(e)));
console.log("again", performance.now() - t);
await store.close();
console.log("closed");
await redis.kill();
console.log("killed");
