/**
 * The policy a gateway serves, kept live: the app built from the policy file, swapped atomically
 * on reload (a bad file is refused and the old policy keeps serving; requests in flight finish
 * under the policy they started with). Shared by main.ts's server (`server.ts`) and each worker of
 * `deno serve` (serve.ts), so that both load, audit, reload and watch alike.
 *
 * Every load of the policy file (at start, on SIGHUP, on a change) writes one audit line with the
 * file's SHA-256 and the outcome. The watch (`policy_watch.ts`) survives atomic saves and
 * Kubernetes ConfigMap updates; a change is a change of the file's content.
 */
import { createApp } from "./app.ts";
import { watchPolicy } from "./policy_watch.ts";
import { readPolicyFiles } from "../lib/policy_files.ts";
import type { LogEntry } from "../lib/log.ts";
import { loadX509For } from "../pki/x509.ts";
import type { Pipeline } from "../core/chain.ts";
import { parsePolicy, type Policy, PolicyError } from "../policy/load.ts";
import { chainProblems } from "../policy/validate.ts";
import type { Services } from "../core/services.ts";
import { withPolicyClients } from "../policy/services.ts";
import { verifyPolicySignature } from "../policy/signature.ts";

/** A policy file as read: its policy and its SHA-256 in hex. */
export interface LoadedPolicy {
  policy: Policy;
  sha256: string;
}

/**
 * The policy file's text as read now, and its SHA-256 in hex; the files it names are read ahead
 * (`readPolicyFiles`), so that parsing it reads none synchronously.
 */
async function readPolicyFile(file: string): Promise<{ text: string; sha256: string }> {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = await Deno.readFile(file);
  } catch (error) {
    throw new PolicyError(file, [`cannot read the file: ${(error as Error).message}`]);
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  // A deployment that names a key loads signed files only; a refused reload keeps the old policy.
  await verifyPolicySignature(file, bytes);
  const text = new TextDecoder().decode(bytes);
  await Promise.all([readPolicyFiles(text), loadX509For(text)]);
  return { text, sha256: digest.toHex() };
}

/** Reads and parses a policy file (and the files it names); throws {@link PolicyError}. */
export async function loadPolicyFile(file: string, pipeline: Pipeline): Promise<LoadedPolicy> {
  const { text, sha256 } = await readPolicyFile(file);
  return { policy: parsePolicy(file, text, pipeline), sha256 };
}

/**
 * The app of `policy` with `services`; throws {@link PolicyError} naming every chain that cannot
 * be built with them (the validation `policy:check` runs, with the real store).
 */
function buildApp(policy: Policy, services: Services) {
  try {
    return createApp({ policy, services });
  } catch (error) {
    const problems = chainProblems(policy, services);
    throw new PolicyError(policy.file, problems.length > 0 ? problems : [String(error)]);
  }
}

/** Options of {@link openPolicy}. */
export interface OpenOptions {
  file: string;
  /** The checks and the terminal handler the policy is resolved with. */
  pipeline: Pipeline;
  /** The file as loaded at start-up ({@link loadPolicyFile}). */
  loaded: LoadedPolicy;
  /** The services, without the store and the upstream client the policy names. */
  services: Services;
  /** Reload when the policy file changes (where the platform allows watching). */
  watch?: boolean;
  /** Fields added to every audit line (a `deno serve` worker's id). */
  labels?: LogEntry;
}

/** A policy being served. */
export interface LivePolicy {
  /** The services with the policy's store and upstream client. */
  services: Services;
  /** Answers a request under the policy serving now. */
  fetch(request: Request, info: Deno.ServeHandlerInfo<Deno.Addr>): Response | Promise<Response>;
  /** Loads the policy file again; true when the new policy now serves. */
  reload(): Promise<boolean>;
  /** Writes the audit line of the start: once the gateway serves (a refused start writes none). */
  serving(): void;
  /** Stops watching the file. */
  unwatch(): void;
  /** Stops watching, then closes the upstream client and the store. */
  close(): Promise<void>;
}

/**
 * Opens the store and the upstream client the policy names and builds its app; throws
 * {@link PolicyError} (after closing what it opened) when a chain cannot be built.
 */
export async function openPolicy(options: OpenOptions): Promise<LivePolicy> {
  const { file, pipeline, loaded, labels } = options;
  const services = await withPolicyClients(loaded.policy, options.services);
  const { store, upstream, log, metrics } = services;
  let app: ReturnType<typeof createApp>;
  try {
    app = buildApp(loaded.policy, services);
  } catch (error) {
    upstream.close();
    await store.close();
    throw error;
  }
  metrics.storeEntries.track(() => store.size);
  /** The SHA-256 of the last content loaded or refused: the watch reloads when it changes. */
  let seen = loaded.sha256;

  async function reloadOnce(): Promise<boolean> {
    let sha256: string | undefined;
    try {
      const read = await readPolicyFile(file);
      sha256 = seen = read.sha256;
      app = buildApp(parsePolicy(file, read.text, pipeline), services);
      metrics.reloads.inc({ outcome: "applied" });
      log.info({ ...audit("applied", "reload", file, sha256), ...labels });
      return true;
    } catch (error) {
      metrics.reloads.inc({ outcome: "refused" });
      log.error({
        ...audit("refused", "reload", file, sha256),
        ...labels,
        problems: error instanceof PolicyError ? error.problems : [String(error)],
      });
      return false;
    }
  }
  let reloading = Promise.resolve(true);
  const reload = () => reloading = reloading.then(reloadOnce, reloadOnce);
  /** A reload when the file's content differs from the last one loaded or refused. */
  async function changed() {
    const sha256 = await readPolicyFile(file).then((read) => read.sha256, () => undefined);
    if (sha256 !== seen) await reload();
  }
  const watcher = options.watch ? await watchPolicy(file, changed) : undefined;

  return {
    services,
    fetch: (request, info) => app.fetch(request, info),
    reload,
    serving: () => log.info({ ...audit("applied", "start", file, loaded.sha256), ...labels }),
    unwatch: () => watcher?.close(),
    async close() {
      watcher?.close();
      upstream.close();
      await store.close();
    },
  };
}

/** How a load of the policy file came about (in its audit line). */
type Trigger = "start" | "reload";

/** The audit line of one load of the policy file. */
function audit(outcome: "applied" | "refused", trigger: Trigger, file: string, sha256?: string) {
  return {
    msg: outcome === "applied"
      ? (trigger === "start" ? "policy loaded" : "policy reloaded")
      : "policy reload refused; the previous policy keeps serving",
    audit: "policy",
    outcome,
    trigger,
    file,
    sha256: sha256 ?? null,
  };
}
