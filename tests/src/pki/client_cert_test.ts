import assert from "node:assert/strict";
import { clientCertificate } from "../../../src/pki/client_cert.ts";
import { GatewayError } from "../../../src/core/errors.ts";

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
