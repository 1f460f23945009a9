/**
 * The write script: the writes that follow a request's answer, several in one call. A completion
 * is the second write of an idempotent request, once the upstream answered (or failed), done only
 * by the request that owns the record (its token); a put keeps a value for a time (a payment's
 * owner, a consent's scope or terms). The writes of one event-loop turn go as one call where the
 * store batches (script.ts), each as atomic as alone.
 */
import type { Completion } from "../types.ts";

/**
 * KEYS: each write's key, in turn. ARGV[1] is the number of writes; then each write's arguments,
 * after its kind:
 * - "c", a completion: token, action ("done", "gone" or "release"), retention_ms, then the answer
 *   kept for a replay: status, headers (JSON pairs), body (base64)
 * - "p", a put: value, ttl_ms
 *
 * Reply: one integer per write: a completion 1 when the record was updated, 0 when another
 * request owns it (or it expired); a put 1.
 */
export const WRITE_SCRIPT = `
local replies = {}
local a = 1
for w = 1, tonumber(ARGV[1]) do
  local key, kind = KEYS[w], ARGV[a + 1]
  if kind == "p" then
    redis.call("SET", key, ARGV[a + 2], "PX", ARGV[a + 3])
    replies[w] = 1
    a = a + 3
  else
    local token, action, retention_ms = ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
    local status, headers, body = ARGV[a + 5], ARGV[a + 6], ARGV[a + 7]
    a = a + 7
    if redis.call("HGET", key, "t") ~= token then
      replies[w] = 0
    elseif action == "release" then
      redis.call("DEL", key)
      replies[w] = 1
    else
      redis.call("HSET", key, "s", action, "st", status, "h", headers, "b", body)
      redis.call("PEXPIRE", key, retention_ms)
      replies[w] = 1
    end
  end
end
return replies
`;

/** A write the script does: a completion, or a value kept for `ttlMs`. */
export type Write =
  | { completion: Completion }
  | { key: string; value: string; ttlMs: number };

/** KEYS and ARGV of {@link WRITE_SCRIPT} for `writes`, every key under `prefix`. */
export function encodeWrites(
  writes: readonly Write[],
  prefix: string,
): { keys: string[]; args: string[] } {
  const keys: string[] = [];
  const args = [String(writes.length)];
  for (const write of writes) {
    if ("completion" in write) {
      const { completion } = write;
      const response = completion.response;
      keys.push(prefix + completion.key);
      args.push(
        "c",
        completion.token,
        completion.action,
        String(completion.retentionMs),
        String(response?.status ?? 0),
        JSON.stringify(response?.headers ?? []),
        response?.body ?? "",
      );
    } else {
      keys.push(prefix + write.key);
      args.push("p", write.value, String(Math.max(1, Math.ceil(write.ttlMs))));
    }
  }
  return { keys, args };
}
