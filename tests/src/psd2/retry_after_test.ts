import assert from "node:assert/strict";
import { RETRY_AFTER_SECONDS, retryAfter } from "../../../src/psd2/retry_after.ts";

Deno.test("retryAfter() gives whole seconds, rounded up, at least 1", () => {
  assert.deepEqual([0, 1, 999, 1000, 1001, 59_500].map(retryAfter), [
    "1",
    "1",
    "1",
    "1",
    "2",
    "60",
  ]);
});

Deno.test("RETRY_AFTER_SECONDS holds the documented values", () => {
  // README's error table: store 2, upstream and keys 5, an X-Request-ID in flight 1; a request
  // shed by upstream_limits 1.
  assert.deepEqual(RETRY_AFTER_SECONDS, {
    storeUnavailable: 2,
    upstreamUnavailable: 5,
    keysUnavailable: 5,
    upstreamBusy: 1,
    inFlight: 1,
  });
});
