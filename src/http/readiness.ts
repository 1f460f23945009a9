/**
 * Readiness (`/readyz`): the state of every dependency a request may need, probed at most once
 * per `readiness.interval` and shared by every caller, so that a load balancer polling each
 * instance never loads the core or the identity provider.
 *
 * Three answers. `not ready` (503): requests cannot be served here (the upstream is unreachable,
 * the store is down while a check fails closed without it, the circuit is open): a load balancer
 * sends them elsewhere. `degraded` (200): some requests fail or lose state, and another instance
 * would fare no better, since these dependencies are shared (the JWKS, the introspection
 * endpoint, the TPP register, revocation sources under `hard`, a full store or a Redis that may
 * forget, a store down under `fail: open`): taking every instance out would turn a partial outage
 * into a full one, so monitoring alerts on it instead. `ready` (200): nothing known against it.
 * Each change of the problems is logged once.
 */
import type { Services } from "../core/services.ts";
import type { Policy } from "../policy/load.ts";
import type { StoreCondition, StoreNodeState } from "../store/types.ts";
import { withDeadline } from "../lib/deadline.ts";
import type { SourceHealth } from "../lib/health.ts";
import { jwksHealth } from "../tokens/jwks.ts";
import { introspectorsOf } from "../tokens/introspection.ts";
import { tppRegister } from "../pki/register.ts";

/**
 * The circuit breaker's state towards the upstream (`upstream_circuit`): `none` without a breaker
 * of the origin, else the worst of them; `open` makes the instance not ready.
 */
export type CircuitState = "none" | "closed" | "half-open" | "open";

/** The store as `/readyz` shows it. */
export interface StoreReadiness {
  /** Whether it answers; `warnings` say when it answers yet refuses writes or may forget. */
  state: "up" | "down";
  kind: string;
  /** Checks that answer 503 while the store is down: the store decides readiness. */
  required_by: string[];
  error?: string;
  /** Each master of a Redis Cluster (every one is probed: each holds some callers' slots). */
  nodes?: StoreNodeState[];
  /** Why it refuses writes or may forget (a full memory store, Redis settings): degraded. */
  warnings?: string[];
  /** The server's settings as read (Redis), or why they could not be. */
  settings?: Record<string, string>;
  settings_unknown?: string;
  /** Entries and bytes against the memory store's bounds. */
  capacity?: StoreCondition["capacity"];
}

/** What `/readyz` answers (its JSON body). */
export interface Readiness {
  status: "ready" | "degraded" | "not ready";
  /** When the dependencies were probed (ISO 8601). */
  checked: string;
  /** What is not up, one line each (absent when ready). */
  problems?: string[];
  dependencies: {
    upstream: { state: "up" | "down"; ms: number; error?: string };
    store: StoreReadiness;
    circuit: { state: CircuitState };
    /** The JWKS URLs of `bearer_token` (fetched now when no longer fresh). */
    jwks?: SourceHealth[];
    /** The introspection endpoints of `bearer_token`. */
    introspection?: SourceHealth[];
    /** `trust.register`, where an operation's group needs it. */
    register?: SourceHealth;
    /** The OCSP responders and CRLs asked so far, where a check has `revocation: hard`. */
    revocation?: SourceHealth[];
  };
}

/** A key no check uses: the store probe deletes it (one round trip, nothing kept). */
const PROBE_KEY = "health:readyz";

/** Checks in force somewhere in the policy with `fail: closed` (they need the store to serve). */
export function closedChecks(policy: Policy): string[] {
  const keys = new Set<string>();
  for (const { options } of policy.operations) {
    for (const [key, value] of Object.entries(options)) {
      if (value.fail === "closed" && value.mode !== "off") keys.add(key);
    }
  }
  return [...keys].sort();
}

/** What the policy's operations need besides the upstream and the store. */
interface Needs {
  jwks: Set<string>;
  introspection: Set<string>;
  register: boolean;
  hardRevocation: boolean;
}

function needs(policy: Policy): Needs {
  const found: Needs = {
    jwks: new Set(),
    introspection: new Set(),
    register: false,
    hardRevocation: false,
  };
  const register = policy.trust.register;
  for (const { options, operation } of policy.operations) {
    // The checks of certificates (TPP, signing) are those with a revocation option.
    let certificates = false;
    for (const value of Object.values(options)) {
      if (value.mode === "off" || !("revocation" in value)) continue;
      certificates = true;
      if (value.revocation === "hard") found.hardRevocation = true;
    }
    const token = options.bearer_token;
    if (token && token.mode !== "off") {
      if (token.verification !== "introspection" && typeof token.jwks_url === "string") {
        found.jwks.add(token.jwks_url);
      }
      const introspection = token.introspection as { url?: string } | undefined;
      if (token.verification !== "jwt" && introspection?.url) {
        found.introspection.add(introspection.url);
      }
    }
    if (certificates && register && register.services[operation.group].length > 0) {
      found.register = true;
    }
  }
  return found;
}

function message(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 200);
}

async function probeUpstream(policy: Policy, services: Services) {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    const response = await services.fetch(policy.upstream.url, {
      method: "GET",
      signal: AbortSignal.timeout(policy.readiness.timeout),
    });
    await response.body?.cancel();
    return { state: "up" as const, ms: ms() };
  } catch (error) {
    return { state: "down" as const, ms: ms(), error: message(error) };
  }
}

/** `Node "a" is down`, `Nodes "a", "b" are down`. */
function downText(nodes: string[]): string {
  const named = nodes.map((n) => `"${n}"`).join(", ");
  return nodes.length === 1 ? `Node ${named} is down` : `Nodes ${named} are down`;
}

/** Whether the store answers (each node of a cluster), within the store's deadline. */
async function storeAnswers(
  policy: Policy,
  services: Services,
): Promise<Pick<StoreReadiness, "state" | "error" | "nodes">> {
  const { store } = services;
  try {
    const ms = policy.store.timeout;
    const late = () => new Error(`No answer within ${ms} ms`);
    if (store.probe) {
      // Several nodes (a cluster's masters): down when any is, since its callers get 503.
      const nodes = await withDeadline(store.probe(), 2 * ms, late);
      const down = nodes.filter((n) => n.state === "down").map((n) => n.node);
      return down.length === 0
        ? { state: "up", nodes }
        : { state: "down", error: downText(down), nodes };
    }
    await withDeadline(store.delete(PROBE_KEY), ms, late);
    return { state: "up" };
  } catch (error) {
    return { state: "down", error: message(error) };
  }
}

async function probeStore(
  policy: Policy,
  services: Services,
  requiredBy: string[],
): Promise<StoreReadiness> {
  const { store } = services;
  const answers = await storeAnswers(policy, services);
  const condition = store.condition?.();
  const warnings = condition?.warnings ?? [];
  return {
    ...answers,
    kind: store.kind,
    required_by: requiredBy,
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(condition?.settings ? { settings: condition.settings } : {}),
    ...(condition?.unknown ? { settings_unknown: condition.unknown } : {}),
    ...(condition?.capacity ? { capacity: condition.capacity } : {}),
  };
}

/** The revocation sources' states (the checker loads the certificate libraries: only if used). */
async function revocationHealth(policy: Policy, services: Services): Promise<SourceHealth[]> {
  const { revocationChecker } = await import("../pki/revocation.ts");
  return revocationChecker(policy.trust.revocation, services, policy.trust.clock_skew).health();
}

/** The problems of a probe, one line each. */
function problemsOf(dependencies: Readiness["dependencies"]): string[] {
  const problems: string[] = [];
  const { upstream, store, circuit } = dependencies;
  if (upstream.state !== "up") problems.push(`upstream: ${upstream.error}`);
  if (store.state === "down") problems.push(`store: ${store.error}`);
  for (const warning of store.warnings ?? []) problems.push(`store: ${warning}`);
  if (circuit.state === "open") problems.push("circuit: open");
  const sources = [
    ...(dependencies.jwks ?? []).map((s) => ["jwks", s] as const),
    ...(dependencies.introspection ?? []).map((s) => ["introspection", s] as const),
    ...(dependencies.register ? [["register", dependencies.register] as const] : []),
    ...(dependencies.revocation ?? []).map((s) => ["revocation", s] as const),
  ];
  for (const [name, source] of sources) {
    if (source.state !== "up") problems.push(`${name} ${source.source}: ${source.error}`);
  }
  return problems;
}

/** Probes every dependency once, now. */
async function probe(
  policy: Policy,
  services: Services,
  requiredBy: string[],
  need: Needs,
): Promise<Readiness> {
  const recentMs = policy.readiness.interval;
  const register = policy.trust.register;
  const [upstream, store, jwks, introspection, registerState, revocation] = await Promise.all([
    probeUpstream(policy, services),
    probeStore(policy, services, requiredBy),
    need.jwks.size > 0 ? jwksHealth(services, need.jwks) : undefined,
    need.introspection.size > 0
      ? Promise.all(introspectorsOf(services, need.introspection).map((i) => i.health(recentMs)))
      : undefined,
    need.register && register ? tppRegister(register, services).health() : undefined,
    need.hardRevocation ? revocationHealth(policy, services) : undefined,
  ]);
  const circuit = { state: services.breakers.originState(services.now()) };
  const dependencies: Readiness["dependencies"] = {
    upstream,
    store,
    circuit,
    ...(jwks ? { jwks } : {}),
    ...(introspection ? { introspection } : {}),
    ...(registerState ? { register: registerState } : {}),
    ...(revocation ? { revocation } : {}),
  };
  const notReady = upstream.state !== "up" ||
    (store.state === "down" && requiredBy.length > 0) ||
    circuit.state === "open";
  const problems = problemsOf(dependencies);
  return {
    status: notReady ? "not ready" : problems.length > 0 ? "degraded" : "ready",
    checked: new Date(services.now()).toISOString(),
    ...(problems.length > 0 ? { problems } : {}),
    dependencies,
  };
}

/**
 * The readiness of a policy's gateway: probed at most once per `readiness.interval` (from the
 * start of one probe to the next), callers during a probe share it. A probe whose problems
 * differ from the last one's is logged (error while not ready or degraded, info once ready).
 */
export function readinessProbe(policy: Policy, services: Services): () => Promise<Readiness> {
  const requiredBy = closedChecks(policy);
  const need = needs(policy);
  const interval = policy.readiness.interval;
  let last: { at: number; result: Readiness } | undefined;
  let running: Promise<Readiness> | undefined;
  let logged: string[] = [];
  return () => {
    if (last && services.now() - last.at < interval) return Promise.resolve(last.result);
    if (!running) {
      const at = services.now();
      running = probe(policy, services, requiredBy, need).then((result) => {
        last = { at, result };
        const problems = result.problems ?? [];
        if (problems.join("\n") !== logged.join("\n")) {
          const resolved = logged.filter((p) => !problems.includes(p));
          const line = { msg: `readiness ${result.status}`, problems, resolved };
          if (result.status === "ready") services.log.info(line);
          else services.log.error(line);
          logged = problems;
        }
        return result;
      }).finally(() => running = undefined);
    }
    return running;
  };
}
