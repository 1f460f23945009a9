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
