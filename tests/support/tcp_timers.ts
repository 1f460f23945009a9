/**
 * The kernel's view of this machine's TCP connections (`/proc/net/tcp` and `tcp6`), for tests
 * of socket options that no API reads back.
 */

/** Clock ticks per second of the timers in `/proc/net/tcp` (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** Timer kind 2 in `/proc/net/tcp`: the keep-alive timer (or zero-window probe). */
const KEEPALIVE = "02";

/**
 * Seconds until the keep-alive timer of each established connection to `port` on this machine
 * fires (one entry per connection whose keep-alive timer runs).
 */
export function keepAliveSeconds(port: number): number[] {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  const seconds: number[] = [];
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of Deno.readTextFileSync(file).split("\n").slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when ...
      const fields = line.trim().split(/\s+/);
      if (fields.length < 6 || !fields[2].endsWith(hex) || fields[3] !== "01") continue;
      const [timer, when] = fields[5].split(":");
      if (timer === KEEPALIVE) seconds.push(parseInt(when, 16) / TICKS_PER_SECOND);
    }
  }
  return seconds;
}
