import assert from "node:assert/strict";
import { addressNetwork, isIpAddress, isIpv4, isIpv6, specialRange } from "../../../src/lib/ip.ts";

Deno.test("isIpv4() accepts dotted quads without leading zeros only", () => {
  for (const ip of ["0.0.0.0", "192.168.8.78", "255.255.255.255"]) {
    assert.equal(isIpv4(ip), true, ip);
  }
  for (const ip of ["256.0.0.1", "1.2.3", "1.2.3.4.5", "01.2.3.4", "1.2.3.-4", "a.b.c.d", ""]) {
    assert.equal(isIpv4(ip), false, ip);
  }
});

Deno.test("isIpv6() accepts IPv6 forms and refuses zones and garbage", () => {
  for (const ip of ["::1", "2001:db8::1", "::ffff:192.0.2.1", "fe80:0:0:0:0:0:0:1"]) {
    assert.equal(isIpv6(ip), true, ip);
  }
  for (const ip of ["fe80::1%eth0", "2001:db8::g", "1.2.3.4", "[::1]", ":::"]) {
    assert.equal(isIpv6(ip), false, ip);
  }
  assert.equal(isIpAddress(null), false);
  assert.equal(isIpAddress("10.0.0.1"), true);
});

Deno.test("specialRange() names the special-purpose range of an address, none for a public one", () => {
  const cases: [string, string | undefined][] = [
    ["127.0.0.1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.9", "private"],
    ["172.31.255.255", "private"],
    ["172.32.0.0", undefined], // the first address past 172.16.0.0/12
    ["172.32.0.1", undefined],
    ["192.168.8.78", "private"],
    ["100.64.1.1", "shared"],
    ["169.254.169.254", "link-local"],
    ["0.0.0.0", "reserved"],
    ["192.0.2.10", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["81.95.1.1", undefined],
    ["::", "reserved"],
    ["::1", "loopback"],
    ["fe80::1", "link-local"],
    ["fd00::7", "private"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:8.8.8.8", undefined],
    ["64:ff9b::a00:1", "private"],
    ["2002:a00:1::1", "private"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["ff02::1", "multicast"],
    ["4000::1", "reserved"],
    ["2a00:1450:4001::1", undefined],
    ["not an address", undefined],
  ];
  for (const [address, range] of cases) assert.equal(specialRange(address), range, address);
});

Deno.test("addressNetwork() keeps an IPv4 address whole and cuts an IPv6 one to its prefix", () => {
  assert.equal(addressNetwork("203.0.113.9", 64), "203.0.113.9");
  assert.equal(addressNetwork("2001:DB8:1:2:aaaa:bbbb:cccc:dddd", 64), "2001:db8:1:2::/64");
  assert.equal(addressNetwork("2001:db8:1:2::1", 64), addressNetwork("2001:db8:1:2:ffff::9", 64));
  assert.notEqual(addressNetwork("2001:db8:1:2::1", 64), addressNetwork("2001:db8:1:3::1", 64));
  assert.equal(addressNetwork("2001:db8:1:2::1", 56), "2001:db8:1::/56");
  assert.equal(addressNetwork("2001:db8:1:2ff::1", 56), "2001:db8:1:200::/56");
  assert.equal(addressNetwork("2001:db8::1", 128), "2001:db8::1");
  assert.equal(addressNetwork("::ffff:203.0.113.9", 64), "203.0.113.9", "IPv4 inside IPv6");
  assert.equal(addressNetwork("not an address", 64), "not an address");
});
