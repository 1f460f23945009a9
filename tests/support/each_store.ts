/**
 * One test on every shared-state backend a gateway runs on here: the memory store and Redis (the
 * Redis run ignored only under SKIP_REDIS=1), for the attacks and rules that must hold on both.
 */
import { startGateway, type TestGateway } from "./gateway.ts";
import { passthroughPolicy, type PolicyInput } from "./policies.ts";
import { type StoreSetup, storeSetup, WITHOUT_REDIS } from "./redis.ts";
import type { TestUpstream } from "./upstream.ts";

/** The backends {@link onEachStore} runs a test on. */
export type StoreKind = "memory" | "redis";

/** Registers `title` once per backend, named `<title> (<kind> store)`; `fn` gets the store. */
export function onEachStore(
  title: string,
  fn: (store: StoreSetup, kind: StoreKind) => Promise<void>,
): void {
  for (const kind of ["memory", "redis"] as const) {
    Deno.test({
      name: `${title} (${kind} store)`,
      ignore: kind === "redis" && WITHOUT_REDIS,
      async fn() {
        await using store = await storeSetup(kind);
        await fn(store, kind);
      },
    });
  }
}

/** A gateway on `store` in front of `core`, every check off but those `policy` turns on. */
export function gatewayOn(
  store: StoreSetup,
  core: TestUpstream,
  policy: PolicyInput,
): Promise<TestGateway> {
  return startGateway({
    policy: passthroughPolicy(store.policy, policy),
    upstream: core.url,
    env: store.env,
  });
}

/**
 * Registers `title` once per backend with a gateway on that store in front of the core `core()`
 * makes; both are stopped after `fn`.
 */
export function onEachStoreGateway(
  title: string,
  setup: { core: () => TestUpstream; policy: PolicyInput },
  fn: (gateway: TestGateway, core: TestUpstream) => Promise<void>,
): void {
  onEachStore(title, async (store) => {
    await using core = setup.core();
    await using gateway = await gatewayOn(store, core, setup.policy);
    await fn(gateway, core);
  });
}
