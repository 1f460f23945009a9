/**
 * Per-key turns within one process: operations that share a key run one after the other, in the
 * order they asked, and the others at once. The Deno KV store takes them before its optimistic
 * transactions, so that the requests of one process (a TPP's requests share its rate-limit key)
 * wait their turn instead of failing their `check` and reading again; only another process's
 * commit can still make one retry.
 */

/** Turns on keys. */
export class KeyLocks {
  /** The last operation to ask for each key, until it ends. */
  readonly #tails = new Map<string, Promise<void>>();

  /** Number of keys some operation holds or waits for. */
  get size(): number {
    return this.#tails.size;
  }

  /**
   * Runs `body` once every operation that asked for one of `keys` before has ended. An operation
   * takes all its keys at once, so two can never wait for each other. `waitMs` bounds the wait:
   * past it, `late()` is thrown without running `body` (an operation that never ends holds up
   * the ones behind it only that long).
   */
  async run<T>(
    keys: string[],
    body: () => Promise<T>,
    wait?: { ms: number; late: () => Error },
  ): Promise<T> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => release = resolve);
    const before: Promise<void>[] = [];
    for (const key of new Set(keys)) {
      const tail = this.#tails.get(key);
      if (tail) before.push(tail);
      this.#tails.set(key, held);
    }
    try {
      if (before.length > 0) await waitFor(Promise.all(before), wait);
      return await body();
    } finally {
      release();
      for (const key of keys) if (this.#tails.get(key) === held) this.#tails.delete(key);
    }
  }
}

/** `turn`, or `wait.late()` thrown after `wait.ms`. */
async function waitFor(turn: Promise<unknown>, wait?: { ms: number; late: () => Error }) {
  if (!wait) return await turn;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(wait.late()), wait.ms);
  });
  try {
    await Promise.race([turn, late]);
  } finally {
    clearTimeout(timer);
  }
}
