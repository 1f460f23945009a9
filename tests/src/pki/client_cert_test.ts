import assert from "node:assert/strict";
import { clientCertificate, DEFAULT_HEADER } from "../../../src/pki/client_cert.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";
import { HeaderPairs } from "../../../src/lib/header_pairs.ts";

const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

Deno.test("clientCertificate() reads the nginx, Envoy and RFC 9440 forms", () => {
  const nginx = new Headers({ "x-ssl-client-cert": encodeURIComponent(PEM) });
  assert.equal(clientCertificate(nginx, "nginx", "X-SSL-Client-Cert"), PEM);
  const envoy = new Headers({
    "x-forwarded-client-cert": `By=spiffe://a;Hash=1;Cert="${
      encodeURIComponent(PEM)
    }";Subject="CN=x, O=y",By=spiffe://b;Cert="other"`,
  });
  assert.equal(clientCertificate(envoy, "envoy", "X-Forwarded-Client-Cert"), PEM);
  const rfc = new Headers({ "client-cert": ":MIIBCgKCAQ==:" });
  assert.equal(clientCertificate(rfc, "rfc9440", "Client-Cert"), "MIIBCgKCAQ==");
  assert.equal(clientCertificate(new Headers(), "rfc9440", "Client-Cert"), undefined);
});

Deno.test("clientCertificate() rejects malformed values with CERTIFICATE_INVALID", () => {
  const bad = (headers: Headers, form: "nginx" | "envoy" | "rfc9440", name: string) =>
    assert.throws(
      () => clientCertificate(headers, form, name),
      (e) => e instanceof GatewayError && e.code === "CERTIFICATE_INVALID" && e.path === name,
    );
  bad(new Headers({ "client-cert": "MIIB" }), "rfc9440", "Client-Cert");
  bad(
    new Headers({ "x-forwarded-client-cert": "Hash=1;Subject=x" }),
    "envoy",
    "X-Forwarded-Client-Cert",
  );
  bad(new Headers({ "x-ssl-client-cert": "%E0%A4%A" }), "nginx", "X-SSL-Client-Cert");
});

Deno.test("clientCertificate() names each form's default header", () => {
  assert.deepEqual(DEFAULT_HEADER, {
    nginx: "X-SSL-Client-Cert",
    envoy: "X-Forwarded-Client-Cert",
    rfc9440: "Client-Cert",
  });
});

Deno.test("clientCertificate() says what each form's header must carry", () => {
  const text = (headers: Headers, form: "nginx" | "envoy" | "rfc9440", name: string) => {
    try {
      clientCertificate(headers, form, name);
    } catch (error) {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.status, 401);
      assert.equal(error.path, name);
      return error.message;
    }
    assert.fail("no error");
  };
  assert.equal(
    text(new Headers({ "x-ssl-client-cert": "%E0%A4%A" }), "nginx", "X-SSL-Client-Cert"),
    'Header "X-SSL-Client-Cert" must carry a URL-encoded PEM certificate',
  );
  assert.equal(
    text(new Headers({ "x-forwarded-client-cert": "Hash=1" }), "envoy", "X-Forwarded-Client-Cert"),
    'Header "X-Forwarded-Client-Cert" must carry Cert="<URL-encoded PEM>"',
  );
  assert.equal(
    text(new Headers({ "xfcc": 'Cert="%E0%A4%A"' }), "envoy", "XFCC"),
    'Header "XFCC" must carry Cert="<URL-encoded PEM>"',
  );
  assert.equal(
    text(new Headers({ "client-cert": "MIIB" }), "rfc9440", "Client-Cert"),
    'Header "Client-Cert" must carry a byte sequence :<base64 DER>: (RFC 9440)',
  );
});

Deno.test("clientCertificate() takes an empty or blank header as none, and trims the value", () => {
  for (const form of ["nginx", "envoy", "rfc9440"] as const) {
    assert.equal(clientCertificate(new Headers({ "h": "  " }), form, "h"), undefined);
  }
  // Headers trims values itself; any other lookup (the gateway's HeaderPairs) need not.
  const pairs = (value: string) => new HeaderPairs([["h", value]]);
  assert.equal(clientCertificate(pairs(" :MIIB: "), "rfc9440", "h"), "MIIB");
  assert.equal(clientCertificate(pairs(" MIIB%20 "), "nginx", "h"), "MIIB ");
  assert.equal(clientCertificate(pairs(" \t "), "nginx", "h"), undefined);
});

Deno.test("clientCertificate() reads RFC 9440 base64 with padding only at its end", () => {
  const read = (value: string) => clientCertificate(new Headers({ "h": value }), "rfc9440", "h");
  assert.equal(read(":MIIBCg==:"), "MIIBCg==");
  assert.equal(read(":MIIBCgK=:"), "MIIBCgK=");
  assert.equal(read(":ab+/:"), "ab+/");
  for (
    const bad of ["MIIB:", ":MIIB", "x:MIIB:", ":MIIB:x", ":MI IB:", ":MIIB===:", "::", ":=MIIB:"]
  ) {
    assert.throws(() => read(bad), GatewayError, bad);
  }
});

Deno.test("clientCertificate() reads Envoy's Cert in any case and spacing, quoted or not", () => {
  const read = (value: string) => clientCertificate(new Headers({ "h": value }), "envoy", "h");
  const pem = encodeURIComponent(PEM);
  assert.equal(read(`Hash=1; CERT = "${pem}"`), PEM);
  assert.equal(read(`Hash=1;cert=${pem}`), PEM);
  // A pair without "=" is skipped, not taken for the end of the element.
  assert.equal(read(`Hash;Cert=${pem}`), PEM);
  assert.equal(read(`Cert=""`), "");
  assert.equal(read(`Cert="`), '"');
  assert.equal(read(`Cert=x"`), 'x"');
  assert.equal(read(`Cert="x`), '"x');
  // The first Cert of the first element, which is about the TPP's own connection.
  assert.equal(read(`Cert=first;Cert=second`), "first");
  // Elements end at ",": a Cert after it belongs to another hop, even after a ";".
  assert.equal(read(`Cert=one,By=b;Cert=two`), "one");
  assert.throws(() => read(`Hash=1,By=b;Cert=two`), GatewayError);
  // A pair without "=" is no key, even one that starts with "Cert".
  assert.equal(read(`Certx;Cert=real`), "real");
  assert.throws(() => read(`By=a;Hash=1,Cert=second`), GatewayError);
});

Deno.test("clientCertificate() splits Envoy's elements and pairs outside quotes only", () => {
  const read = (value: string) => clientCertificate(new Headers({ "h": value }), "envoy", "h");
  // Separators inside quotes belong to the value; an escaped quote does not end it.
  assert.equal(read('Subject="CN=a,O=b;c";Cert=one'), "one");
  assert.equal(read('Subject="CN=\\"a,b\\";x";Cert=two'), "two");
  assert.equal(read('Cert="a;b,c"'), "a;b,c");
  assert.equal(read('Cert="a\\"b"'), 'a\\"b');
  // A backslash as the last character is kept as it is.
  assert.equal(read('Cert="ab\\'), '"ab\\');
  assert.equal(read("Cert=ab\\"), "ab\\");
});
