/**
 * What a dependency of the gateway says of itself for `/readyz`: one shape for the key sets, the
 * introspection endpoints, the TPP register and the revocation sources.
 */

/**
 * up: it answers; degraded: requests are served from what it gave before, or some of its sources
 * fail; down: requests that need it fail (503) or, for the store, lose state.
 */
export type HealthState = "up" | "degraded" | "down";

/** One dependency (a URL, a file) and its state now. */
export interface SourceHealth {
  /** Where it is: a URL or a file path. */
  source: string;
  state: HealthState;
  /** Why it is not up. */
  error?: string;
  /** More for operators (keys held, entries loaded, when). */
  [detail: string]: unknown;
}

/** The text of an error, short enough for a readiness answer. */
export function healthError(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 200);
}
