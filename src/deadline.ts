/**
 * Deadlines for upstream exchanges without a timer per request: requests that start within the
 * same short slice share one AbortSignal, which fires `ms` after the slice ends. Each exchange is
 * cut off between `ms` and `ms + SLICE_MS` after it started; a finished exchange ignores a later
 * abort.
 */

/** Width of a slice, in milliseconds (the deadline's precision). */
export const SLICE_MS = 50;

interface Slice {
  ends: number;
  signal: AbortSignal;
}

const slices = new Map<number, Slice>();

/** A signal that aborts with a `TimeoutError` at least `ms` from now (at most `ms + SLICE_MS`). */
export function deadlineSignal(ms: number, now = performance.now()): AbortSignal {
  let slice = slices.get(ms);
  if (!slice || now >= slice.ends) {
    const controller = new AbortController();
    const ends = now + SLICE_MS;
    const timer = setTimeout(
      () => controller.abort(new DOMException("The upstream exchange timed out", "TimeoutError")),
      ms + SLICE_MS,
    );
    Deno.unrefTimer(timer);
    slice = { ends, signal: controller.signal };
    slices.set(ms, slice);
  }
  return slice.signal;
}
