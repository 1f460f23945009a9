/** Waiting in tests for something that happens in its own time (a restart, a reload, a count). */

/** `fn`'s result once it stops throwing; its last error after `ms` milliseconds. */
export async function retryUntil<T>(fn: () => Promise<T>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  while (true) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() > end) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Polls `done` every `pollMs` until it is true or `ms` milliseconds passed; its last answer. */
export async function waitFor(done: () => boolean, ms = 5000, pollMs = 50): Promise<boolean> {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, pollMs));
  return done();
}
