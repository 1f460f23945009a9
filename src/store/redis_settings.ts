/**
 * Whether a Redis keeps what the gateway writes. An executed payment's X-Request-ID must outlive
 * a restart of Redis and a full memory: a Redis with `appendonly no` forgets every id at a
 * restart, and one whose `maxmemory-policy` evicts (`allkeys-*`, or `volatile-*`: every key the
 * gateway writes has a TTL) drops ids at its memory limit; either way a TPP's retry of an executed
 * payment is executed again. The settings are read (`CONFIG GET`) at start and on each new
 * connection, since a failover or a restart may bring other settings; a server that refuses
 * CONFIG (managed services often do) is reported as such, not as a problem.
 */
import { ErrorReply } from "redis";
import type { Logger } from "../lib/log.ts";
import type { StoreCondition } from "./types.ts";

/** What one Redis node's settings say. */
export interface NodeSettings {
  /** `appendonly` and `maxmemory-policy` as read; absent when CONFIG was refused. */
  settings?: Record<string, string>;
  /** Why the settings are not known (CONFIG refused or renamed). */
  unknown?: string;
  warnings: string[];
}

/** The settings read from each node. */
const READ = ["appendonly", "maxmemory-policy"] as const;

/** The warnings of one node's settings (none when it keeps every key). */
export function settingsWarnings(node: string, settings: Record<string, string>): string[] {
  const warnings: string[] = [];
  const appendonly = settings.appendonly;
  if (appendonly !== undefined && appendonly !== "yes") {
    warnings.push(
      `Redis "${node}" has appendonly ${appendonly}: a restart forgets executed X-Request-IDs, and their retries run again (set appendonly yes)`,
    );
  }
  const policy = settings["maxmemory-policy"];
  if (policy !== undefined && policy !== "noeviction") {
    warnings.push(
      `Redis "${node}" has maxmemory-policy ${policy}: at its memory limit it evicts keys, executed X-Request-IDs among them (set maxmemory-policy noeviction)`,
    );
  }
  return warnings;
}

/** The answer of CONFIG GET (RESP2: name, value, name, value...) as a record. */
function pairs(reply: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(reply)) return out;
  for (let i = 0; i + 1 < reply.length; i += 2) out[String(reply[i])] = String(reply[i + 1]);
  return out;
}

/**
 * Reads a node's settings with `send` (one command with its deadline). A refused CONFIG (an error
 * reply: unknown command, no permission) is `unknown`; a node that does not answer throws.
 */
export async function readNodeSettings(
  node: string,
  send: (args: string[]) => Promise<unknown>,
): Promise<NodeSettings> {
  const settings: Record<string, string> = {};
  try {
    for (const name of READ) Object.assign(settings, pairs(await send(["CONFIG", "GET", name])));
  } catch (error) {
    if (!(error instanceof ErrorReply)) throw error;
    return {
      unknown: `Redis "${node}" refused CONFIG GET (${error.message.slice(0, 120)})`,
      warnings: [],
    };
  }
  const missing = READ.filter((name) => settings[name] === undefined);
  if (missing.length > 0) {
    return {
      settings,
      unknown: `Redis "${node}" did not name ${missing.join(", ")} in CONFIG GET`,
      warnings: settingsWarnings(node, settings),
    };
  }
  return { settings, warnings: settingsWarnings(node, settings) };
}

/**
 * The settings of a store's nodes as last read, logged when they change: an error line for each
 * new set of warnings, an info line when the settings cannot be read.
 */
export class SettingsWatch {
  readonly #nodes = new Map<string, NodeSettings>();
  constructor(readonly log?: Logger) {}

  /** Reads one node's settings now and records them; a node that does not answer keeps its last. */
  async read(node: string, send: (args: string[]) => Promise<unknown>): Promise<void> {
    let read: NodeSettings;
    try {
      read = await readNodeSettings(node, send);
    } catch {
      return;
    }
    const before = this.#nodes.get(node);
    this.#nodes.set(node, read);
    if (JSON.stringify(before) === JSON.stringify(read)) return;
    if (read.warnings.length > 0) {
      this.log?.error({
        msg: "store may forget executed X-Request-IDs",
        store: "redis",
        node,
        settings: read.settings,
        warnings: read.warnings,
      });
    } else if (read.unknown) {
      this.log?.info({
        level: "warn",
        msg: "store settings unknown",
        store: "redis",
        node,
        reason: read.unknown,
        hint: "make sure the server persists every write (appendonly) and never evicts keys",
      });
    }
  }

  /** Keeps only these nodes (a cluster's masters now). */
  keep(nodes: string[]): void {
    for (const node of this.#nodes.keys()) if (!nodes.includes(node)) this.#nodes.delete(node);
  }

  /** The condition of the nodes read so far (settings by node where there are several). */
  condition(): StoreCondition {
    const warnings: string[] = [];
    const unknown: string[] = [];
    const settings: Record<string, string> = {};
    const several = this.#nodes.size > 1;
    for (const [node, read] of this.#nodes) {
      warnings.push(...read.warnings);
      if (read.unknown) unknown.push(read.unknown);
      for (const [name, value] of Object.entries(read.settings ?? {})) {
        settings[several ? `${node} ${name}` : name] = value;
      }
    }
    return {
      warnings,
      ...(Object.keys(settings).length > 0 ? { settings } : {}),
      ...(unknown.length > 0 ? { unknown: unknown.join("; ") } : {}),
    };
  }
}
