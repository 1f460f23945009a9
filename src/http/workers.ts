/**
 * The workers of one `deno serve --parallel` process: each runs its own gateway (its own
 * metrics, its own memory store) in a thread of one process, and they find each other over a
 * BroadcastChannel (which spans the threads of one process, never two processes).
 *
 * What it is for: a scrape of /metrics reaches one worker, which asks every other one for its
 * snapshot and answers the sum; and a worker can tell at start-up that it is not alone (a memory
 * store per worker cannot hold X-Request-ID uniqueness or a limit).
 *
 * node:worker_threads' BroadcastChannel rather than the global one: it can be unref'd, so the
 * channel never keeps a worker alive once its server has shut down (SIGTERM).
 */
import { BroadcastChannel as NodeBroadcastChannel } from "node:worker_threads";
import type { MetricsSnapshot } from "../lib/metrics.ts";

/** The channel every worker of a process joins. */
const CHANNEL = "xs2a-edge:workers";

/** How long a scrape waits for the other workers' snapshots, at most. */
const COLLECT_MS = 500;

type Message =
  | { type: "hello"; from: string }
  | { type: "here"; from: string }
  | { type: "bye"; from: string }
  | { type: "collect"; from: string; nonce: string }
  | { type: "snapshot"; from: string; nonce: string; snapshot: MetricsSnapshot };

/** This worker's view of the others. */
export interface Workers {
  /** This worker's id (a short random one), for its log lines. */
  readonly id: string;
  /** Workers heard from, this one included. */
  count(): number;
  /** Every worker's snapshot (this one's first), within {@link COLLECT_MS}. */
  collect(): Promise<MetricsSnapshot[]>;
  close(): void;
}

/** The BroadcastChannel of Node's API (unref) as the web one's type. */
type Channel = BroadcastChannel & { unref(): void };

/**
 * Joins the process's workers; `snapshot` answers the others' scrapes. The others answer the
 * greeting within milliseconds (the workers of a process start together); one that joins later
 * greets this one in turn.
 */
export function joinWorkers(
  snapshot: () => MetricsSnapshot,
  options: {
    channel?: string;
    /** Called when a worker is heard from for the first time (with the count, this one included). */
    onPeer?: (count: number) => void;
  } = {},
): Workers {
  const id = crypto.randomUUID().slice(0, 8);
  const known = new Set<string>();
  const peers = {
    add(peer: string) {
      if (known.has(peer)) return;
      known.add(peer);
      options.onPeer?.(known.size + 1);
    },
    delete: (peer: string) => known.delete(peer),
    has: (peer: string) => known.has(peer),
    get size() {
      return known.size;
    },
    [Symbol.iterator]: () => known[Symbol.iterator](),
  };
  const waiting = new Map<string, (from: string, snapshot: MetricsSnapshot) => void>();
  const channel = new NodeBroadcastChannel(options.channel ?? CHANNEL) as unknown as Channel;
  channel.unref();
  const post = (message: Message) => channel.postMessage(message);
  channel.onmessage = (event: MessageEvent<Message>) => {
    const message = event.data;
    if (message.from === id) return;
    switch (message.type) {
      case "hello":
        peers.add(message.from);
        post({ type: "here", from: id });
        break;
      case "here":
        peers.add(message.from);
        break;
      case "bye":
        peers.delete(message.from);
        break;
      case "collect":
        peers.add(message.from);
        post({ type: "snapshot", from: id, nonce: message.nonce, snapshot: snapshot() });
        break;
      case "snapshot":
        waiting.get(message.nonce)?.(message.from, message.snapshot);
        break;
    }
  };
  post({ type: "hello", from: id });

  return {
    id,
    count: () => peers.size + 1,
    async collect() {
      const own = snapshot();
      if (peers.size === 0) return [own];
      const nonce = crypto.randomUUID();
      const answers = new Map<string, MetricsSnapshot>();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        waiting.set(nonce, (from, answer) => {
          answers.set(from, answer);
          peers.add(from);
          if ([...peers].every((peer) => answers.has(peer))) resolve();
        });
        timer = setTimeout(resolve, COLLECT_MS);
        post({ type: "collect", from: id, nonce });
      });
      clearTimeout(timer);
      waiting.delete(nonce);
      // A worker that did not answer is gone (or stuck): not waited for again.
      for (const peer of peers) if (!answers.has(peer)) peers.delete(peer);
      return [own, ...answers.values()];
    },
    close() {
      post({ type: "bye", from: id });
      channel.close();
    },
  };
}
