/**
 * Rate-limit leases: the requests a store decision granted beyond its own (`LimitPart.want`),
 * kept by this gateway process for the requests that follow on the same limit key, for at most
 * {@link LEASE_MS}. A lease is taken from the limit in the store before it is used, so the limit
 * is never exceeded across instances; a lease left unused when it ends is capacity lost for as
 * long as the limit takes to refill it, which the gateway bounds by asking for no more than the
 * limit refills in {@link LEASE_MS} (rate_limit.ts), and the store by granting no more than a
 * quarter of what the limit allows now (near the limit every request asks the store).
 */
import type { LimitVerdict, Store } from "./types.ts";

/** How long a lease is kept. */
export const LEASE_MS = 1000;
/**
 * Most limit keys with a lease at once. When as many hold a live one, requests of other keys ask
 * the store for themselves alone: no lease is dropped to make room, so a caller whose keys fill
 * the table never costs another caller requests it was granted.
 */
const MAX_LEASES = 10_000;

/** A lease: requests left, until when, and what the store said when it granted them. */
export interface Lease {
  left: number;
  until: number;
  /** The limit's remaining requests in the store after the grant. */
  remaining: number;
  /** When the limit is full again, as the store said at the grant (ms since the epoch). */
  resetAt: number;
}

/** The leases of one store's limits in this process. */
export class Leases {
  readonly #leases = new Map<string, Lease>();
  /** Limit keys a store decision is asking a lease of now: the requests beside it ask for one. */
  readonly #asking = new Set<string>();

  /**
   * Whether a request may ask the store for a lease of `key`: not while another is asking, so
   * that a burst of requests at once leaves at most one lease unused.
   */
  ask(key: string, now: number): boolean {
    if (this.#asking.has(key) || !this.#room(key, now)) return false;
    this.#asking.add(key);
    return true;
  }

  /** Whether `key` has or may have a lease: ended leases (the oldest first) make room. */
  #room(key: string, now: number): boolean {
    if (this.#leases.size + this.#asking.size < MAX_LEASES || this.#leases.has(key)) return true;
    for (const [oldest, lease] of this.#leases) {
      if (now < lease.until) break;
      this.#leases.delete(oldest);
    }
    return this.#leases.size + this.#asking.size < MAX_LEASES;
  }

  /** The store answered (or failed) the request that asked for a lease of `key`. */
  answered(key: string): void {
    this.#asking.delete(key);
  }

  /** One request of `key`'s lease, as the store would have answered it; none when it is used up. */
  take(key: string, now: number): { lease: Lease; verdict: LimitVerdict } | undefined {
    const lease = this.#leases.get(key);
    if (!lease) return undefined;
    if (now >= lease.until) {
      this.#leases.delete(key);
      return undefined;
    }
    if (lease.left === 0) return undefined;
    lease.left--;
    const verdict = {
      allowed: true,
      remaining: lease.remaining + lease.left,
      resetMs: Math.max(0, lease.resetAt - now),
      retryMs: 0,
    };
    return { lease, verdict };
  }

  /** Gives a request taken from `lease` back (the request was refused by another part). */
  giveBack(lease: Lease): void {
    lease.left++;
  }

  /** Keeps what `verdict` granted beyond its own request as `key`'s lease. */
  keep(key: string, verdict: LimitVerdict, now: number): void {
    const granted = verdict.granted ?? 1;
    if (!verdict.allowed || granted <= 1) return;
    const live = this.#leases.get(key);
    // Re-inserted: the map stays in the order the leases end.
    this.#leases.delete(key);
    this.#leases.set(key, {
      left: granted - 1 + (live && now < live.until ? live.left : 0),
      until: now + LEASE_MS,
      remaining: verdict.remaining,
      resetAt: now + verdict.resetMs,
    });
  }

  /** Limit keys with a lease now. */
  get size(): number {
    return this.#leases.size;
  }
}

const tables = new WeakMap<Store, Leases>();

/** The leases of `store`'s limits in this process. */
export function leasesOf(store: Store): Leases {
  let leases = tables.get(store);
  if (!leases) tables.set(store, leases = new Leases());
  return leases;
}
