import assert from "node:assert/strict";
import fc from "fast-check";
import {
  LOOPBACK,
  normalAddress,
  parseRange,
  Terminators,
  terminators,
} from "../../../src/lib/terminators.ts";

Deno.test("parseRange() reads addresses and CIDRs of both families and refuses the rest", () => {
  for (const good of ["10.0.0.0/8", "192.0.2.7", "0.0.0.0/0", "2001:db8::/32", "::1", "::/0"]) {
    assert.ok(parseRange(good), good);
  }
  for (
    const bad of ["10.0.0.0/33", "10.0.0/8", "2001:db8::/129", "host.example", "10.0.0.1/", "/8"]
  ) {
    assert.equal(parseRange(bad), undefined, bad);
  }
});

Deno.test("Terminators.trusts() matches both families, IPv4-mapped IPv6 as IPv4", () => {
  const peers = new Terminators(["10.1.0.0/16", "192.0.2.7", "2001:db8:5::/48"]);
  assert.ok(peers.trusts("10.1.200.3"));
  assert.ok(peers.trusts("192.0.2.7"));
  assert.ok(peers.trusts("::ffff:10.1.0.9"));
  assert.ok(peers.trusts("2001:DB8:5:0:0:0:0:1"));
  assert.ok(!peers.trusts("10.2.0.1"));
  assert.ok(!peers.trusts("192.0.2.8"));
  assert.ok(!peers.trusts("2001:db8:6::1"));
  assert.ok(!peers.trusts(undefined));
  assert.ok(!peers.trusts("not an address"));
});

Deno.test("terminators() believes loopback peers when the policy lists none", () => {
  assert.deepEqual(LOOPBACK, ["127.0.0.0/8", "::1/128"]);
  const peers = terminators(undefined);
  assert.ok(peers.trusts("127.0.0.1") && peers.trusts("::1") && peers.trusts("127.9.9.9"));
  assert.ok(!peers.trusts("192.168.1.10"));
  assert.ok(!terminators([]).trusts("127.0.0.1"));
});

Deno.test("Terminators.clientAddress() takes the rightmost X-Forwarded-For hop that is no terminator", () => {
  const peers = new Terminators(["10.0.0.0/24"]);
  // The terminator appended the client; what lies left of it the client wrote itself.
  assert.equal(peers.clientAddress("10.0.0.5", "198.51.100.7, 203.0.113.1"), "203.0.113.1");
  // Two tiers of terminators: both hops are skipped.
  assert.equal(peers.clientAddress("10.0.0.5", "6.6.6.6,203.0.113.1, 10.0.0.9"), "203.0.113.1");
  // Ports and brackets as some terminators write them; several headers joined by ",".
  assert.equal(peers.clientAddress("10.0.0.5", "203.0.113.1:5123"), "203.0.113.1");
  assert.equal(peers.clientAddress("10.0.0.5", "[2001:DB8::1]:443"), "2001:db8::1");
  // Every hop a terminator: the leftmost.
  assert.equal(peers.clientAddress("10.0.0.5", "10.0.0.7, 10.0.0.8"), "10.0.0.7");
  // An element that cannot be read stops the walk at the nearest hop that could.
  assert.equal(peers.clientAddress("10.0.0.5", "203.0.113.1, unknown"), "10.0.0.5");
  assert.equal(peers.clientAddress("10.0.0.5", "junk, 10.0.0.8"), "10.0.0.8");
  // From anyone else the header is not believed.
  assert.equal(peers.clientAddress("203.0.113.50", "198.51.100.7"), "203.0.113.50");
  assert.equal(peers.clientAddress("10.0.0.5", null), "10.0.0.5");
});

Deno.test("normalAddress() writes one form per address", () => {
  assert.equal(normalAddress("::ffff:192.0.2.1"), "192.0.2.1");
  assert.equal(normalAddress("2001:0DB8:0:0::1"), "2001:db8::1");
  assert.equal(normalAddress("192.0.2.1"), "192.0.2.1");
  assert.equal(normalAddress("192.0.2.01"), undefined);
});

Deno.test("Terminators.clientAddress() answers the peer or an address for any X-Forwarded-For", () => {
  const peers = new Terminators(["10.0.0.0/24", "2001:db8::/64"]);
  const element = fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    fc.constantFrom("10.0.0.3", "2001:db8::7", "unknown", "", " ", "[::1]:80", "1.2.3.4:5"),
    fc.string({ maxLength: 20 }),
  );
  fc.assert(
    fc.property(fc.array(element, { maxLength: 6 }), fc.constantFrom(", ", ","), (list, sep) => {
      const client = peers.clientAddress("10.0.0.5", list.join(sep));
      assert.ok(client === "10.0.0.5" || normalAddress(client) === client, client);
    }),
  );
});

Deno.test("parseRange() takes a prefix of digits only, without a leading zero", () => {
  for (
    const bad of ["10.0.0.0/a8", "10.0.0.0/8x", "10.0.0.0/08", "10.0.0.0/ 8", "2001:db8::/032"]
  ) {
    assert.equal(parseRange(bad), undefined, bad);
  }
  assert.deepEqual(parseRange("10.1.2.3/8"), { v6: false, bits: 10n << 24n, prefix: 8 });
  assert.deepEqual(parseRange("10.1.2.3"), { v6: false, bits: 0x0a010203n, prefix: 32 });
  assert.deepEqual(parseRange("10.1.2.3/0"), { v6: false, bits: 0n, prefix: 0 });
});

Deno.test("Terminators.trusts() never matches an address of the other family", () => {
  assert.ok(!new Terminators(["::/0"]).trusts("10.0.0.1"));
  assert.ok(!new Terminators(["0.0.0.0/0"]).trusts("::1"));
  assert.ok(new Terminators(["0.0.0.0/0"]).trusts("::ffff:10.0.0.1"));
});

Deno.test("Terminators.clientAddress() reads an X-Forwarded-For element only when it is whole", () => {
  const peers = new Terminators(["10.0.0.0/24"]);
  const client = (element: string) => peers.clientAddress("10.0.0.5", element);
  assert.equal(client("[2001:db8::1]"), "2001:db8::1");
  assert.equal(client(" [2001:db8::1]:8443 "), "2001:db8::1");
  // Text around the brackets or the port: unreadable, so the peer is the client.
  for (const bad of ["x[2001:db8::1]", "[2001:db8::1]x", "[2001:db8::1]:80x", "[2001:db8::1]:"]) {
    assert.equal(client(bad), "10.0.0.5", bad);
  }
  for (const bad of ["203.0.113.1:5123x", "x203.0.113.1:5123", "203.0.113.1:x:5.6.7.8:9"]) {
    assert.equal(client(bad), "10.0.0.5", bad);
  }
});

Deno.test("Terminators refuses a list with what is no address, and terminators() makes one per list", () => {
  assert.throws(() => new Terminators(["10.0.0.0/8", "nginx.internal"]), {
    message: '"nginx.internal" is no IP address or CIDR',
  });
  const list = ["10.0.0.0/8"];
  assert.equal(terminators(list), terminators(list));
  assert.equal(terminators(undefined), terminators(undefined));
  assert.notEqual(terminators(list), terminators(["10.0.0.0/8"]));
});
