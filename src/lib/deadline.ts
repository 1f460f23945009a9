/**
 * Deadlines without a timer per request: deadlines of the same length that start within one short
 * slice of time share one timer, which fires `ms` after the slice ends. A deadline of `ms` thus
 * expires between `ms` and `ms + sliceWidth(ms)` after it started; one that was cleared, or whose
 * exchange finished, ignores the later firing. A timer per request costs a few microseconds to set
 * and clear, on every upstream exchange, store command and request body.
 */

/** Widest slice, in milliseconds (the precision of long deadlines). */
const SLICE_MS = 50;

/** Width of the slices of an `ms` deadline: a tenth of it, at most {@link SLICE_MS}. */
export function sliceWidth(ms: number): number {
  return Math.min(SLICE_MS, Math.max(1, ms / 10));
}

interface Slice {
  ends: number;
  timer: ReturnType<typeof setTimeout>;
  /** Callbacks still due when the slice's timer fires. */
  due: Set<() => void>;
  /** The slice's signal, made at the first {@link deadlineSignal}. */
  controller?: AbortController;
}

const slices = new Map<number, Slice>();

function sliceOf(ms: number, now: number): Slice {
  const current = slices.get(ms);
  if (current && now < current.ends) return current;
  const width = sliceWidth(ms);
  const due = new Set<() => void>();
  const timer = setTimeout(() => {
    slice.controller?.abort(new DOMException("The deadline passed", "TimeoutError"));
    for (const expire of due) {
      try {
        expire();
      } catch {
        // One callback failing must not keep the others of its slice from firing.
      }
    }
    due.clear();
  }, ms + width);
  // Unreferenced while no callback is due: a signal's deadline never keeps the process alive
  // (the exchange it guards does, while it runs), nor does a slice whose callbacks were cleared.
  Deno.unrefTimer(timer);
  const slice: Slice = { ends: now + width, timer, due };
  slices.set(ms, slice);
  return slice;
}

/** A signal that aborts with a `TimeoutError` at least `ms` from now (see {@link sliceWidth}). */
export function deadlineSignal(ms: number, now = performance.now()): AbortSignal {
  const slice = sliceOf(ms, now);
  return (slice.controller ??= new AbortController()).signal;
}

/**
 * Calls `expire` at least `ms` from now (see {@link sliceWidth}) unless the returned function is
 * called first.
 */
export function onDeadline(ms: number, expire: () => void): () => void {
  const { due, timer } = sliceOf(ms, performance.now());
  if (due.size === 0) Deno.refTimer(timer);
  due.add(expire);
  return () => {
    if (due.delete(expire) && due.size === 0) Deno.unrefTimer(timer);
  };
}

/** `promise`, or `timeout()`'s error when it has not settled `ms` from now. */
export function withDeadline<T>(promise: Promise<T>, ms: number, timeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const clear = onDeadline(ms, () => reject(timeout()));
    promise.then(
      (value) => {
        clear();
        resolve(value);
      },
      (error) => {
        clear();
        reject(error);
      },
    );
  });
}
