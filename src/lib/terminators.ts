/**
 * The TLS terminators in front of the gateway (`trust.terminators`): the peers whose certificate
 * header and X-Forwarded-For are believed. Anyone else who reaches the gateway directly could put
 * another TPP's public certificate in the header, or any address in X-Forwarded-For.
 */
import { isIpv4, isIpv6 } from "./ip.ts";
import { memo } from "./memo.ts";

/**
 * The terminators when the policy lists none: the loopback addresses, so that a terminator on the
 * same host (and curl on a developer's machine) works, and nobody who reaches the gateway over the
 * network is believed.
 */
export const LOOPBACK: readonly string[] = ["127.0.0.0/8", "::1/128"];

/** An address range: the family's bits of its first address and the prefix length. */
interface Range {
  v6: boolean;
  bits: bigint;
  prefix: number;
}

/** An address as its family's bits; IPv4-mapped IPv6 (`::ffff:192.0.2.1`) is read as IPv4. */
interface Bits {
  v6: boolean;
  bits: bigint;
}

function ipv4Bits(text: string): bigint {
  return text.split(".").reduce((bits, octet) => (bits << 8n) | BigInt(Number(octet)), 0n);
}

function ipv6Bits(text: string): bigint {
  // The URL parser writes any IPv6 form (embedded IPv4, upper case, zeros) as hex pieces with
  // at most one "::".
  const host = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  const [head, tail] = host.split("::");
  const left = head ? head.split(":") : [];
  const right = tail === undefined ? [] : tail ? tail.split(":") : [];
  const pieces = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return pieces.reduce((bits, piece) => (bits << 16n) | BigInt(parseInt(piece, 16)), 0n);
}

/** The bits of an address, or `undefined` when the text is no IP address. */
function addressBits(text: string): Bits | undefined {
  if (isIpv4(text)) return { v6: false, bits: ipv4Bits(text) };
  if (!isIpv6(text)) return undefined;
  const bits = ipv6Bits(text);
  if (bits >> 32n === 0xffffn) return { v6: false, bits: bits & 0xffffffffn };
  return { v6: true, bits };
}

/** A CIDR (`10.0.0.0/8`, `2001:db8::/32`) or a single address, or `undefined` when malformed. */
export function parseRange(text: string): Range | undefined {
  const slash = text.indexOf("/");
  const address = addressBits(slash < 0 ? text : text.slice(0, slash));
  if (!address) return undefined;
  const width = address.v6 ? 128 : 32;
  const prefixText = slash < 0 ? String(width) : text.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(prefixText) || Number(prefixText) > width) return undefined;
  const prefix = Number(prefixText);
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(width - prefix);
  return { v6: address.v6, bits: address.bits & mask, prefix };
}

function inRange(address: Bits, range: Range): boolean {
  if (address.v6 !== range.v6) return false;
  const width = range.v6 ? 128 : 32;
  return address.bits >> BigInt(width - range.prefix) ===
    range.bits >> BigInt(width - range.prefix);
}

/**
 * The address in one canonical text form (IPv4-mapped as IPv4, IPv6 compressed lower case). Each
 * text is worked out once: the peer's address comes back on every request of a connection.
 */
export const normalAddress: (text: string) => string | undefined = memo(canonicalAddress);

function canonicalAddress(text: string): string | undefined {
  const address = addressBits(text);
  if (!address) return undefined;
  if (!address.v6) {
    return [24n, 16n, 8n, 0n].map((shift) => String((address.bits >> shift) & 0xffn)).join(".");
  }
  return new URL(`http://[${text}]/`).hostname.slice(1, -1);
}

/** One X-Forwarded-For element as an address: `192.0.2.1`, `192.0.2.1:443`, `[2001:db8::1]:443`. */
function forwardedAddress(element: string): string | undefined {
  let text = element.trim();
  const bracketed = /^\[([^\]]+)\](?::[0-9]+)?$/.exec(text);
  if (bracketed) text = bracketed[1];
  else if (/^[0-9.]+:[0-9]+$/.test(text)) text = text.slice(0, text.indexOf(":"));
  return normalAddress(text);
}

/** The listed terminators, and the client address behind them. */
export class Terminators {
  readonly #ranges: Range[];
  /** Whether an address is one of them, worked out once per address. */
  readonly #trusted = memo((address) => {
    const bits = addressBits(address);
    return bits !== undefined && this.#ranges.some((range) => inRange(bits, range));
  });

  /** `cidrs` must be valid ({@link parseRange}); the policy schema checks them. */
  constructor(cidrs: readonly string[]) {
    this.#ranges = cidrs.map((cidr) => {
      const range = parseRange(cidr);
      if (!range) throw new Error(`"${cidr}" is no IP address or CIDR`);
      return range;
    });
  }

  /** Whether the address (a peer's) is one of the terminators. */
  trusts(address: string | undefined): boolean {
    return address ? this.#trusted(address) : false;
  }

  /**
   * The client's address given the peer and the X-Forwarded-For value (several headers joined
   * by ","): from a terminator, the rightmost address that is not a terminator (each hop appends
   * the address it saw, so what lies left of it is the client's to invent); from anyone else, or
   * when an element cannot be read, the nearest hop that could.
   */
  clientAddress(peer: string, forwardedFor: string | null): string {
    if (!forwardedFor || !this.trusts(peer)) return peer;
    let client = peer;
    const elements = forwardedFor.split(",");
    for (let i = elements.length - 1; i >= 0; i--) {
      const address = forwardedAddress(elements[i]);
      if (address === undefined) return client;
      client = address;
      if (!this.trusts(address)) return address;
    }
    return client;
  }
}

const cache = new WeakMap<readonly string[], Terminators>();

/** The terminators of a policy's `trust.terminators` (loopback when unset), made once per list. */
export function terminators(list: readonly string[] | undefined): Terminators {
  const key = list ?? LOOPBACK;
  let found = cache.get(key);
  if (!found) cache.set(key, found = new Terminators(key));
  return found;
}
