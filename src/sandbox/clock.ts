/**
 * The sandbox clock: a base clock (the real time, or a test's) plus an offset that the sandbox
 * controls set, so that a TPP can move the bank into the future (consent expiry, checkout holds,
 * decoupled SCA) while time keeps running.
 */

/** A clock whose reading can be moved. */
export interface SandboxClock {
  now(): Date;
  /** Moves the clock so that it reads `instant` now; `undefined` goes back to the base clock. */
  set(instant: Date | undefined): void;
  /** Moves the clock forward (or back, with a negative value) by `ms` milliseconds. */
  advance(ms: number): void;
  /** How far the clock is ahead of its base, in milliseconds. */
  offsetMs(): number;
}

/** A clock over `base` with no offset. */
export function createClock(base: () => Date): SandboxClock {
  let offset = 0;
  return {
    now: () => new Date(base().getTime() + offset),
    set(instant) {
      offset = instant ? instant.getTime() - base().getTime() : 0;
    },
    advance(ms) {
      offset += ms;
    },
    offsetMs: () => offset,
  };
}
