import assert from "node:assert/strict";
import { isIpAddress, isIpv4, isIpv6 } from "../../../src/lib/ip.ts";

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
