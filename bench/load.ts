/**
 * The bench's processes and load: servers spawned with the gateway's V8 flags (pinned when
 * BENCH_PIN=1), wrk runs of bench/wrk.lua, process CPU and resident memory, and the gateways'
 * Prometheus counters.
 */
import { V8_FLAGS } from "../src/lib/v8_flags.ts";
import type { RequestShape } from "./signed_pool.ts";
import { PAYMENT_BODY, PAYMENT_TARGET } from "../tests/support/signing.ts";
import { initiationHeaders } from "../tests/support/requests.ts";

/**
 * A payment initiation without an X-Request-ID (wrk.lua makes a fresh one per request): the
 * signed fixture's body (441 bytes) and headers, unsigned.
 */
export const WRITE: RequestShape = {
  method: "POST",
  path: PAYMENT_TARGET,
  headers: Object.fromEntries(
    Object.entries(
      initiationHeaders({ "psu-id": "PSU-1234", "tpp-redirect-uri": "https://tpp.example/return" }),
    ).filter(([name]) => name !== "x-request-id"),
  ),
  body: PAYMENT_BODY,
};

const root = new URL("..", import.meta.url).pathname;
export const pinned = Deno.env.get("BENCH_PIN") === "1";
const lastCore = navigator.hardwareConcurrency - 1;
if (pinned && lastCore < 1) throw new Error("BENCH_PIN needs at least two cores");
/** How the processes are placed, for the bench's first line. */
export const placement = pinned
  ? `; pinned: servers on core ${lastCore}, load on 0-${lastCore - 1} (not the targets' setup)`
  : "";

/** `taskset` arguments that put a process on the servers' core or on the load's cores. */
function cores(role: "server" | "load"): string[] {
  return !pinned ? [] : ["taskset", "-c", role === "server" ? `${lastCore}` : `0-${lastCore - 1}`];
}

/** Every process the bench started; {@link stopAll} ends them. */
export const children: Deno.ChildProcess[] = [];

/** A command, on its cores when pinned. */
export function command(
  program: string,
  args: string[],
  role: "server" | "load",
  options: Omit<Deno.CommandOptions, "args"> = {},
): Deno.Command {
  const [pin, ...pinArgs] = cores(role);
  return pin
    ? new Deno.Command(pin, { args: [...pinArgs, program, ...args], ...options })
    : new Deno.Command(program, { args, ...options });
}

/** BENCH_CPU_PROF: a directory where every server writes a V8 CPU profile when it stops. */
const profiles = Deno.env.get("BENCH_CPU_PROF");

/** A Deno server with the gateway's flags (every server runs with them); returns its pid. */
export function spawn(
  args: string[],
  env: Record<string, string> = {},
  role: "server" | "load" = "server",
): number {
  const profile = profiles && role === "server"
    ? [
      "--cpu-prof",
      `--cpu-prof-dir=${profiles}`,
      `--cpu-prof-name=${args[0].replace(/\W/g, "_")}-${children.length}.cpuprofile`,
    ]
    : [];
  const child = command(
    Deno.execPath(),
    ["run", V8_FLAGS, ...profile, "--allow-all", ...args],
    role,
    {
      env,
      cwd: root,
      stdout: "null",
      stderr: "inherit",
    },
  ).spawn();
  children.push(child);
  return child.pid;
}

/** Ends every process the bench started. */
export function stopAll(): void {
  for (const child of children) {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
  }
}

/** User plus system CPU time of a process, in microseconds. */
export async function cpuMicros(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Resident memory of a process, in bytes. */
export async function rssBytes(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(status.match(/VmRSS:\s+(\d+) kB/)![1]) * 1024;
}

/** One wrk run's figures. */
export interface WrkResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  /** Answers of 400 or more, and socket errors. */
  non2xx: number;
}

/** One wrk run of `duration` seconds against 127.0.0.1:`port` with bench/wrk.lua. */
export async function wrk(
  port: number,
  request: RequestShape,
  duration: number,
  connections: number,
): Promise<WrkResult> {
  const output = await command(
    "wrk",
    [
      "-t1",
      `-c${connections}`,
      `-d${duration}s`,
      "--latency",
      "-s",
      `${root}bench/wrk.lua`,
      `http://127.0.0.1:${port}`,
    ],
    "load",
    {
      env: {
        BENCH_METHOD: request.method,
        BENCH_PATH: request.path,
        BENCH_BODY: request.body ?? "",
        BENCH_HEADERS: Object.entries(request.headers).map(([k, v]) => `${k}: ${v}`).join("|"),
        BENCH_POOL: request.pool ?? "",
        BENCH_SEED: crypto.getRandomValues(new Uint32Array(1))[0].toString(16).padStart(8, "0"),
      },
      stdout: "piped",
      stderr: "piped",
    },
  ).output();
  const text = new TextDecoder().decode(output.stdout);
  const line = text.split("\n").find((l) => l.startsWith("BENCH "));
  if (!line) throw new Error(`wrk failed: ${text}${new TextDecoder().decode(output.stderr)}`);
  const value = (name: string) => Number(line.match(new RegExp(`${name}=([0-9.]+)`))![1]);
  const requests = value("requests");
  return {
    requests,
    rps: requests / value("seconds"),
    p50: value("p50"),
    p99: value("p99"),
    non2xx: value("non2xx") + value("sockerr"),
  };
}

/** Token of the gateways' /metrics. */
export const metricsToken = crypto.randomUUID();

/** A gateway's counters summed over their labels, by metric name (empty when unavailable). */
export async function counters(port: number): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
    headers: { authorization: `Bearer ${metricsToken}` },
  }).catch(() => undefined);
  if (!response?.ok) {
    await response?.body?.cancel();
    return sums;
  }
  for (const line of (await response.text()).split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const name = line.slice(0, line.search(/[{ ]/));
    sums.set(name, (sums.get(name) ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1)));
  }
  return sums;
}
