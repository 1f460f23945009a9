/**
 * Modules loaded on first use, not at start-up: a library that only some policies or requests
 * need (jose for signatures and tokens) costs a start that never uses it nothing. The import
 * itself stays a string literal, so `deno compile` and `deno cache` still include the module.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lazy } from "./lazy.ts";
 *
 * let loads = 0;
 * const answer = lazy(() => (loads++, Promise.resolve(42)));
 * assert.equal(loads, 0);
 * assert.equal(await answer(), 42);
 * assert.equal(await answer(), 42);
 * assert.equal(loads, 1);
 * ```
 */

/**
 * `load` called on the first call and its promise kept: later calls get the same promise without
 * asking the module loader again (a per-request call costs a property read).
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => loaded ??= load();
}
