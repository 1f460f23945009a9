/**
 * The policy file's global sections (everything that is not per-operation check options).
 * Each section is a zod schema; src/policy/load.ts puts them at the top level of the file.
 */
import { z } from "zod";
import { tppKeysSection, trustSection } from "../pki/sections.ts";
import { identifiersSection } from "../psd2/identifiers.ts";
import { duration, httpUrl, pathPrefix, port, TIMER_MAX } from "../lib/fields.ts";

/** The upstream clients (src/upstream/): the gateway's own HTTP/1.1 client, the runtime's fetch. */
export const UPSTREAM_CLIENTS = ["http1", "fetch"] as const;

/** When an upstream connection carries another exchange (src/upstream/http1/client.ts `Reuse`). */
export const UPSTREAM_REUSE = ["echoed", "always", "never"] as const;

/**
 * True on Deno Deploy, which refuses `Deno.connect` to port 443 (TLS is required there) but allows
 * `Deno.connectTls`, which the `http1` client uses for https URLs, and plain TCP to other ports.
 */
function onDeploy(): boolean {
  try {
    return Deno.env.get("DENO_DEPLOYMENT_ID") !== undefined;
  } catch {
    return false;
  }
}

/** Where the legacy core lives. */
export const upstreamSection = z.object({
  url: httpUrl().describe(
    "Base URL of the bank's core API, for example ${UPSTREAM_URL}",
  ),
  prefix: pathPrefix({ optional: true }).default("/psd2/v1").describe(
    "Path prefix of the Berlin Group operations on the upstream; it replaces the public /v1",
  ),
  client: z.enum(UPSTREAM_CLIENTS).default("http1").describe(
    "http1: the gateway's own HTTP/1.1 client with keep-alive connections (about half the CPU per request; also on Deno Deploy, over TLS for https URLs); fetch: the runtime's fetch (HTTP/2, HTTP_PROXY settings). Takes effect at the next start",
  ),
  reuse: z.enum(UPSTREAM_REUSE).default("echoed").describe(
    "When a connection to the core carries another exchange. echoed: only after an answer that echoed the request's X-Request-ID, and an answer on a reused connection must echo it (a late extra answer of the core can then never reach another request; a core that does not echo gets a connection per exchange); always: after any clean answer (a late answer that arrives as the next request is written reaches it); never: a connection per exchange. Takes effect at the next start",
  ),
}).strict().superRefine((upstream, context) => {
  const url = URL.parse(upstream.url); // null when the URL was refused above
  if (
    upstream.client === "http1" && url?.protocol === "http:" && url.port === "443" && onDeploy()
  ) {
    context.addIssue({
      code: "custom",
      path: ["url"],
      message:
        "Deno Deploy refuses plain TCP to port 443: use an https URL (the http1 client then connects over TLS) or upstream.client: fetch",
    });
  }
}).describe("The upstream (legacy core banking API)");

/** An optional value from an environment reference: an empty string means "not set". */
function unsetWhenEmpty<T extends z.ZodType>(schema: T) {
  return z.preprocess((v) => (v === "" || v === null ? undefined : v), schema.optional());
}

/** Where Prometheus scrapes the metrics. */
export const metricsSection = z.object({
  port: unsetWhenEmpty(port()).describe(
    "Serve /metrics on this separate port (on the gateway's host), for example ${METRICS_PORT:-}",
  ),
  token: unsetWhenEmpty(z.string().min(16)).describe(
    "Serve /metrics on the main port to requests with Authorization: Bearer <token>, for example ${METRICS_TOKEN:-}",
  ),
}).strict().default({}).describe("Prometheus metrics; off unless a port or a token is set");

/** What the access log shows of the PSU. */
export const accessLogSection = z.object({
  psu_id: z.enum(["mask", "hmac"]).default("mask").describe(
    "How PSU-ID appears in the access log: mask (first and last characters only), or hmac (a pseudonym, hmac:<32 hex>: HMAC-SHA-256 of the id under hmac_key, the same for every line of one PSU, so lines can be joined without revealing the id)",
  ),
  hmac_key: unsetWhenEmpty(z.string().min(32)).describe(
    "The secret key of psu_id: hmac, at least 32 characters, from ${ENV}; whoever holds it can test a guessed PSU-ID against a pseudonym",
  ),
}).strict().superRefine((log, context) => {
  if (log.psu_id === "hmac" && !log.hmac_key) {
    context.addIssue({ code: "custom", path: ["hmac_key"], message: "psu_id: hmac needs a key" });
  }
}).prefault({}).describe("The access log (one JSON line per request on stdout)");

/** How `/readyz` probes the gateway's dependencies. */
export const readinessSection = z.object({
  interval: duration({ min: "100ms" }).prefault("5s").describe(
    "At most one probe of the dependencies (upstream, store) per interval, for example 5s; /readyz answers the last result in between",
  ),
  timeout: duration({ max: TIMER_MAX }).prefault("2s").describe(
    "How long a probe of the upstream may take before it counts as down, for example 2s",
  ),
}).strict().prefault({}).describe(
  "Readiness (/readyz): the upstream, the store when a check fails closed without it, the circuit",
);

/** The kinds of store (`src/store/`). */
export const STORE_KINDS = ["memory", "sqlite", "kv", "redis", "upstash"] as const;

/** A kind of store. */
export type StoreKind = typeof STORE_KINDS[number];

/** The kind a policy that names none gets in this process (see {@link setDefaultStoreKind}). */
let unnamedKind: StoreKind = "memory";

/**
 * Sets the kind of store a policy that names none gets in this process: main.ts serves with
 * `sqlite` (nothing executed twice across a restart); `deno task start`, the tests and
 * `deno serve` keep `memory`.
 */
export function setDefaultStoreKind(kind: StoreKind): void {
  unnamedKind = kind;
}

/** Where shared state lives (idempotency records, rate limits, consent frequency). */
export const storeSection = z.object({
  kind: unsetWhenEmpty(z.enum(STORE_KINDS)).transform((kind) => kind ?? unnamedKind).describe(
    "memory: in-process, for one instance, forgotten on restart; sqlite: a file on this machine (node:sqlite), durable, shared by the processes that open it; kv: Deno KV, the platform's database on Deno Deploy or a local file; redis: Redis over TCP; upstash: Redis over HTTP (edge runtimes). Unset or empty: sqlite when main.ts serves (the container, the binary), memory under deno task start, deno serve and the tests",
  ),
  url: z.string().default("").describe(
    "redis: redis://host:6379 (rediss:// for TLS); upstash: the REST URL; kv: a KV Connect URL (https://api.deno.com/databases/<id>/connect, token in DENO_KV_ACCESS_TOKEN), empty for a file or Deno Deploy's own database; from ${ENV}, for example ${STORE_URL}",
  ),
  path: z.string().default("").describe(
    "sqlite, kv: the database file; empty: xs2a-edge.sqlite (or xs2a-edge.kv) in the directory GATEWAY_DATA_DIR names (default ./data; /var/lib/xs2a-edge in the container), or Deno Deploy's own database for kv there. The process needs --allow-write for it",
  ),
  synchronous: z.enum(["normal", "full"]).default("normal").describe(
    "sqlite: normal keeps every commit through a crash or kill -9 of the gateway (WAL, about 30 us a transaction); full also through a power loss or kernel crash (an fsync per commit, about 200 us, which the event loop waits for)",
  ),
  token: z.string().default("").describe("upstash: the REST token, from ${ENV}"),
  prefix: z.string().regex(/^[A-Za-z0-9:._-]*(\{[A-Za-z0-9:._-]+\}[A-Za-z0-9:._-]*)?$/)
    .default("xs2a:").describe(
      "Prefix of every key, so that several gateways (or environments) can share one Redis; on a cluster, a hash tag in it ({xs2a}:) keeps every key in one slot",
    ),
  cluster: z.boolean().default(false).describe(
    "redis: the url is one node of a Redis (or Valkey) Cluster; the others are found from it, and each decision's keys share the caller's hash tag",
  ),
  timeout: duration({ max: TIMER_MAX }).prefault("500ms").describe(
    "Deadline of one store call, for example 500ms; past it the store counts as unavailable and each check's `fail` applies",
  ),
  nodes: z.array(z.string()).default([]).describe(
    "redis cluster: more nodes (redis:// or rediss:// URLs) to discover the cluster from when the url's node is down",
  ),
  replicas: z.int().min(0).default(0).describe(
    "redis: replicas that must acknowledge each write (WAIT) before its decision counts; 0: none. Replication is asynchronous: a claim no replica holds is lost when its master fails over, and the payment's retry runs again. A write not acknowledged within replica_timeout fails like a store outage (each check's fail applies)",
  ),
  replica_timeout: duration({ min: "1ms", max: TIMER_MAX }).prefault("100ms").describe(
    "redis: how long a write waits for its replicas (WAIT's timeout), below timeout, for example 100ms",
  ),
  max_entries: z.number().int().positive().default(100_000).describe(
    "memory: most entries kept; past it the oldest rate-limit counters are evicted, never a decision inside its retention (an X-Request-ID, a consent's day counter, a learnt consent or scope): when only those are left, new writes fail like a store outage (each check's fail applies)",
  ),
  max_bytes: z.number().int().positive().default(67_108_864).describe(
    "memory: most bytes kept (an estimate of keys, values and stored answers), bounded like max_entries; default 64 MiB",
  ),
  owner_share: z.number().gt(0, "must be more than 0").max(1, "must be at most 1").default(0.25)
    .describe(
      "memory: the most of max_entries and of max_bytes one caller (a TPP, or ip:<network> without one) holds in decisions (X-Request-IDs, consent counters, learnt consents and scopes); a caller past it is refused like a store outage, not the others; 1: no share",
    ),
  allow_per_instance: z.boolean().default(false).describe(
    "memory: allow a store per instance where there are several (deno serve --parallel workers, Deno Deploy isolates); each then holds its own X-Request-IDs and counts, so a repeat or a limit is only seen by the instance that saw the first",
  ),
}).strict().superRefine((store, context) => {
  if (store.cluster && store.kind !== "redis") {
    context.addIssue({
      code: "custom",
      path: ["cluster"],
      message: `only a redis store can be a cluster, not ${store.kind}`,
    });
  }
  if (store.replicas > 0 && store.kind !== "redis") {
    context.addIssue({
      code: "custom",
      path: ["replicas"],
      message: `only a redis store waits for replicas, not ${store.kind}`,
    });
  }
  if (store.replicas > 0 && store.replica_timeout >= store.timeout) {
    context.addIssue({
      code: "custom",
      path: ["replica_timeout"],
      message: `must be below the store's timeout (${store.timeout} ms)`,
    });
  }
  if (store.nodes.length > 0 && !store.cluster) {
    context.addIssue({ code: "custom", path: ["nodes"], message: "nodes need cluster: true" });
  }
  for (const [i, node] of store.nodes.entries()) {
    if (!URL.canParse(node) || !["redis:", "rediss:"].includes(new URL(node).protocol)) {
      context.addIssue({
        code: "custom",
        path: ["nodes", i],
        message: `must be a redis:// or rediss:// URL, got "${node}"`,
      });
    }
  }
  if (store.path !== "" && store.kind !== "sqlite" && store.kind !== "kv") {
    context.addIssue({
      code: "custom",
      path: ["path"],
      message: `a ${store.kind} store has no path (only sqlite and kv have a file)`,
    });
  }
  if (store.kind === "memory" || store.kind === "sqlite") return;
  if (store.kind === "kv") {
    if (store.url !== "" && !/^https?:\/\//.test(store.url)) {
      context.addIssue({
        code: "custom",
        path: ["url"],
        message: `a kv store's url is a KV Connect URL (https://), got "${store.url}"`,
      });
    }
    return;
  }
  if (store.url === "") {
    context.addIssue({
      code: "custom",
      path: ["url"],
      message: `a ${store.kind} store needs a url`,
    });
  } else if (!URL.canParse(store.url)) {
    context.addIssue({ code: "custom", path: ["url"], message: "must be a URL" });
  } else {
    const scheme = new URL(store.url).protocol;
    const want = store.kind === "redis" ? ["redis:", "rediss:"] : ["https:", "http:"];
    if (!want.includes(scheme)) {
      context.addIssue({
        code: "custom",
        path: ["url"],
        message: `a ${store.kind} store needs a ${want.join(" or ")} URL, got "${scheme}"`,
      });
    }
  }
  if (store.kind === "upstash" && store.token === "") {
    context.addIssue({
      code: "custom",
      path: ["token"],
      message: "an upstash store needs a token",
    });
  }
}).prefault({}).describe(
  "The shared-state store (default: sqlite when main.ts serves, memory under deno task start and deno serve)",
);

/** The parsed `store` section. */
export type StoreSection = z.output<typeof storeSection>;

/** A candidate policy judged on live traffic in report mode (src/policy/shadow.ts). */
export const shadowSection = unsetWhenEmpty(z.string().min(1).optional()).describe(
  "A candidate policy file, for example ${SHADOW_POLICY:-}: every request is also judged by its request steps in report mode (never the checks of shared state, the proxy or anything with side effects), never changing the answer; where its decision differs, a log line and xs2a_shadow_differences_total say so",
);

/** Every global section, by its key in the policy file. */
export const SECTIONS = {
  upstream: upstreamSection,
  metrics: metricsSection,
  trust: trustSection,
  tpp_keys: tppKeysSection,
  store: storeSection,
  readiness: readinessSection,
  access_log: accessLogSection,
  identifiers: identifiersSection,
  shadow: shadowSection,
};

/** The global sections of a loaded policy, parsed. */
export type PolicySections = { [K in keyof typeof SECTIONS]: z.output<typeof SECTIONS[K]> };
