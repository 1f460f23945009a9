/**
 * `store.replicas`: a write counts once that many replicas hold it. Redis replicates
 * asynchronously, so a master that acknowledged a claim and fails before its replica received it
 * takes the claim with it, and the promoted replica lets the payment's retry run again. `WAIT`
 * after each write closes that window (for the replicas it names; Redis still makes no promise
 * across a failover that picks a replica which did not acknowledge).
 */
import { StoreUnavailableError } from "./types.ts";

/** What a write needs: how many replicas, within how long, and how to send `WAIT`. */
export interface ReplicaWait {
  replicas: number;
  timeoutMs: number;
  /** Sends `WAIT <replicas> <timeout>` on the connection (the node) the write went to. */
  wait(args: string[]): Promise<unknown>;
}

/**
 * `write` once the replicas acknowledged it (and every earlier write of its connection); a write
 * they did not acknowledge in time throws {@link StoreUnavailableError}: it stays on the master,
 * and the request meets the check's `fail` mode rather than a claim that a failover may lose.
 */
export async function replicated<T>(write: Promise<T>, needs: ReplicaWait): Promise<T> {
  const reply = await write;
  if (needs.replicas === 0) return reply;
  const { replicas, timeoutMs } = needs;
  const acked = Number(await needs.wait(["WAIT", String(replicas), String(timeoutMs)]));
  if (!(acked >= replicas)) {
    throw new StoreUnavailableError(
      `Redis: ${acked} of ${replicas} replicas acknowledged the write within ${timeoutMs} ms`,
    );
  }
  return reply;
}
