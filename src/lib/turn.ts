/**
 * The end of the event loop's current turn, shared by the requests of the turn.
 *
 * The proxy waits for it before it writes a request to the core, so that the requests whose
 * checks ran in one turn are written together. Under load the core then reads them in one burst
 * and the answers come back in one: on loopback, a write to a peer that sleeps pays for waking it,
 * and one wake-up serves the whole turn. Measured (docs/performance.md, "Where a request's time
 * goes"): a payment initiation under the default policy cost 116 us of the gateway's CPU one by
 * one and 86 us in turns; a request alone waits one extra turn of the loop (tens of microseconds).
 */

/** The current turn's promise, until its end. */
let turn: Promise<void> | undefined;

/**
 * A promise that resolves at the end of the current turn (`setImmediate`): the same one for every
 * caller of the turn, a new one after it.
 *
 * @example
 * const a = endOfTurn();
 * assert.equal(endOfTurn(), a); // the same turn, the same promise
 * await a;
 * assert.notEqual(endOfTurn(), a); // a new turn
 */
export function endOfTurn(): Promise<void> {
  return turn ??= new Promise((resolve) => {
    setImmediate(() => {
      turn = undefined;
      resolve();
    });
  });
}
