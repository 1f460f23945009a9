/**
 * The completion script: the second write of an idempotent request, once the upstream answered
 * (or failed), done only by the request that owns the record (its token).
 */
import type { Completion } from "../types.ts";

/**
 * KEYS: the X-Request-ID record.
 * ARGV: token, action ("done", "gone" or "release"), retention_ms, then the answer kept for a
 * replay: status, headers (JSON pairs), body (base64).
 * Reply: 1 when the record was updated, 0 when another request owns it (or it expired).
 */
export const COMPLETE_SCRIPT = `
local record = KEYS[1]
local token, action, retention_ms = ARGV[1], ARGV[2], ARGV[3]
local status, headers, body = ARGV[4], ARGV[5], ARGV[6]
if redis.call("HGET", record, "t") ~= token then return 0 end
if action == "release" then
  redis.call("DEL", record)
  return 1
end
redis.call("HSET", record, "s", action, "st", status, "h", headers, "b", body)
redis.call("PEXPIRE", record, retention_ms)
return 1
`;

/** KEYS and ARGV of {@link COMPLETE_SCRIPT} for a completion, its key under `prefix`. */
export function encodeCompletion(
  completion: Completion,
  prefix: string,
): { keys: string[]; args: string[] } {
  const response = completion.response;
  return {
    keys: [prefix + completion.key],
    args: [
      completion.token,
      completion.action,
      String(completion.retentionMs),
      String(response?.status ?? 0),
      JSON.stringify(response?.headers ?? []),
      response?.body ?? "",
    ],
  };
}
