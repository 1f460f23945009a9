/**
 * IP address syntax for PSU-IP-Address: dotted-quad IPv4 without leading zeros, and IPv6 as the
 * URL parser reads it (no zone ids).
 */

const OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
const IPV4 = new RegExp(`^${OCTET}(\\.${OCTET}){3}$`);

/** Whether the value is an IPv4 address in dotted-quad form, like `192.168.8.78`. */
export function isIpv4(value: string): boolean {
  return IPV4.test(value);
}

/** Whether the value is an IPv6 address, like `2001:db8::1` or `::ffff:192.0.2.1`. */
export function isIpv6(value: string): boolean {
  if (!/^[0-9A-Fa-f:.]+$/.test(value) || !value.includes(":")) return false;
  return URL.canParse(`http://[${value}]/`);
}

/** Whether a PSU-IP-Address value is an address at all (either family). */
export function isIpAddress(value: string | null | undefined): boolean {
  return value !== null && value !== undefined && (isIpv4(value) || isIpv6(value));
}

/**
 * The special-purpose ranges an address can be in (IANA's IPv4 and IPv6 Special-Purpose Address
 * Registries): addresses that are never a client's public address on the internet.
 */
export type SpecialRange =
  | "loopback"
  | "private"
  | "shared"
  | "link-local"
  | "documentation"
  | "benchmarking"
  | "multicast"
  | "reserved";

/** The address as a 32-bit number (`value` a valid dotted quad). */
function ipv4Number(value: string): number {
  return value.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
}

const IPV4_RANGES: [base: number, bits: number, range: SpecialRange][] = (
  [
    ["0.0.0.0", 8, "reserved"], // "this network"
    ["10.0.0.0", 8, "private"],
    ["100.64.0.0", 10, "shared"], // carrier-grade NAT
    ["127.0.0.0", 8, "loopback"],
    ["169.254.0.0", 16, "link-local"],
    ["172.16.0.0", 12, "private"],
    ["192.0.0.0", 24, "reserved"], // IETF protocol assignments
    ["192.0.2.0", 24, "documentation"],
    ["192.88.99.0", 24, "reserved"], // 6to4 relay anycast, deprecated
    ["192.168.0.0", 16, "private"],
    ["198.18.0.0", 15, "benchmarking"],
    ["198.51.100.0", 24, "documentation"],
    ["203.0.113.0", 24, "documentation"],
    ["224.0.0.0", 4, "multicast"],
    ["240.0.0.0", 4, "reserved"], // and the broadcast address
  ] as const
).map(([base, bits, range]) => [ipv4Number(base), bits, range]);

function ipv4Range(address: number): SpecialRange | undefined {
  for (const [base, bits, range] of IPV4_RANGES) {
    const size = 2 ** (32 - bits);
    if (address >= base && address < base + size) return range;
  }
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address (`value` valid), as the URL parser reads it. */
function ipv6Groups(value: string): number[] {
  const host = new URL(`http://[${value}]/`).hostname.slice(1, -1);
  const groups = (part: string) => part === "" ? [] : part.split(":").map((g) => parseInt(g, 16));
  const gap = host.indexOf("::");
  if (gap < 0) return groups(host);
  const head = groups(host.slice(0, gap));
  const tail = groups(host.slice(gap + 2));
  return [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
}

/** Whether the first `bits` bits of `groups` are those of `prefix`. */
function inPrefix(groups: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((groups[i] & mask) !== (prefix[i] & mask)) return false;
  }
  return true;
}

/** An IPv4 address carried inside an IPv6 one (groups `at` and `at + 1`). */
function embedded(groups: number[], at: number): SpecialRange | undefined {
  return ipv4Range(groups[at] * 65_536 + groups[at + 1]);
}

const IPV6_RANGES: [
  prefix: string,
  bits: number,
  range: SpecialRange | "ipv4-at-6" | "ipv4-at-1",
][] = [
  ["::", 128, "reserved"], // unspecified
  ["::1", 128, "loopback"],
  ["::ffff:0:0", 96, "ipv4-at-6"], // IPv4-mapped
  ["::", 96, "reserved"], // IPv4-compatible, deprecated
  ["64:ff9b::", 96, "ipv4-at-6"], // NAT64, well-known prefix
  ["64:ff9b:1::", 48, "private"], // NAT64, local use
  ["100::", 64, "reserved"], // discard only
  ["2001:db8::", 32, "documentation"],
  ["2001::", 23, "reserved"], // IETF protocol assignments
  ["2002::", 16, "ipv4-at-1"], // 6to4
  ["3fff::", 20, "documentation"],
  ["fc00::", 7, "private"], // unique local
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "private"], // site-local, deprecated
  ["ff00::", 8, "multicast"],
];
const IPV6_PREFIXES = IPV6_RANGES.map(([prefix, bits, range]) =>
  [ipv6Groups(prefix), bits, range] as const
);

function ipv6Range(groups: number[]): SpecialRange | undefined {
  for (const [prefix, bits, range] of IPV6_PREFIXES) {
    if (!inPrefix(groups, prefix, bits)) continue;
    if (range === "ipv4-at-6") return embedded(groups, 6);
    if (range === "ipv4-at-1") return embedded(groups, 1);
    return range;
  }
  // Outside 2000::/3, the only global unicast space allocated, nothing is public.
  return inPrefix(groups, [0x2000], 3) ? undefined : "reserved";
}

/**
 * The special-purpose range an IP address is in (loopback, private, link-local, ...), or
 * `undefined` for a public address; IPv4 inside IPv6 (mapped, NAT64, 6to4) is judged as IPv4.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { specialRange } from "./ip.ts";
 *
 * assert.equal(specialRange("127.0.0.1"), "loopback");
 * assert.equal(specialRange("::ffff:10.0.0.1"), "private");
 * assert.equal(specialRange("81.95.1.1"), undefined);
 * ```
 */
export function specialRange(value: string): SpecialRange | undefined {
  if (isIpv4(value)) return ipv4Range(ipv4Number(value));
  if (isIpv6(value)) return ipv6Range(ipv6Groups(value));
  return undefined;
}

/**
 * The network a client address is counted by: an IPv4 address whole, an IPv6 address by its
 * first `bits` bits (`2001:db8:1:2::/64`), since one IPv6 client usually holds a whole /64 and
 * could otherwise take a new address for every request; an IPv4 address inside IPv6 (mapped)
 * counts as the IPv4 address. Anything else is returned as it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { addressNetwork } from "./ip.ts";
 *
 * assert.equal(addressNetwork("2001:DB8:1:2:aaaa::1", 64), "2001:db8:1:2::/64");
 * assert.equal(addressNetwork("::ffff:192.0.2.1", 64), "192.0.2.1");
 * assert.equal(addressNetwork("192.0.2.1", 64), "192.0.2.1");
 * ```
 */
export function addressNetwork(value: string, bits: number): string {
  if (!isIpv6(value)) return value;
  const groups = ipv6Groups(value);
  if (inPrefix(groups, ipv6Groups("::ffff:0:0"), 96)) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join(".");
  }
  const kept = groups.map((group, i) => {
    const left = bits - 16 * i;
    if (left >= 16) return group;
    return left <= 0 ? 0 : group & ((0xffff << (16 - left)) & 0xffff);
  });
  const address = new URL(`http://[${kept.map((g) => g.toString(16)).join(":")}]/`).hostname
    .slice(1, -1);
  return bits >= 128 ? address : `${address}/${bits}`;
}
