/**
 * The refund script: one read taken back from a consent's day counter, when the core did not
 * answer it with 2xx (the read was counted on the way in, in the decision).
 */

/**
 * KEYS: the day counter. ARGV: none.
 * Reply: the count after the refund. A counter that is gone (expired) or at zero stays so, and
 * DECR keeps the counter's expiry.
 */
export const REFUND_SCRIPT = `
local counter = KEYS[1]
local used = tonumber(redis.call("GET", counter) or "0")
if used > 0 then return redis.call("DECR", counter) end
return 0
`;
