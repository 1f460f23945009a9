import assert from "node:assert/strict";
import { xmlProblem } from "../../../src/bodies/xml.ts";
import { PAIN_001 } from "../../support/requests.ts";

const DOC = (inner: string) =>
  `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.03">${inner}</Document>`;

Deno.test("xmlProblem() accepts a well-formed pain.001 document", () => {
  assert.equal(xmlProblem(PAIN_001, 64), undefined);
  assert.equal(xmlProblem("\uFEFF" + DOC("<A/>"), 64), undefined);
  assert.equal(
    xmlProblem(`<p:Document xmlns:p="urn:x"><p:A b='1' c="&#x41;&lt;"/></p:Document>`, 64),
    undefined,
  );
  assert.equal(
    xmlProblem(`<!-- head -->${DOC("<![CDATA[<not markup>]]>")}<!-- tail -->\n`, 64),
    undefined,
  );
});

Deno.test("xmlProblem() refuses every processing instruction but the declaration, wherever it stands", () => {
  for (const body of [`<?pi data?>${DOC("")}`, DOC("<?xml-stylesheet href='x.xsl'?>")]) {
    assert.match(
      xmlProblem(body, 64)!,
      /must not contain a processing instruction \("<\?(pi|xml-stylesheet)"\)/,
    );
  }
  assert.match(xmlProblem(`<?xml?>${DOC("")}`, 64)!, /malformed/);
});

Deno.test("xmlProblem() rejects unbalanced, misnested and unclosed tags", () => {
  assert.match(xmlProblem(DOC("<A><B></A></B>"), 64)!, /closes "<B>" with "<\/A>"/);
  assert.match(xmlProblem(DOC("<A>"), 64)!, /does not close "<Document>"|closes/);
  assert.match(xmlProblem("<Document><A></A>", 64)!, /does not close "<Document>"/);
  assert.match(xmlProblem(DOC("</A>"), 64)!, /closes "<Document>" with "<\/A>"/);
  assert.match(xmlProblem("</Document>", 64)!, /without a start tag/);
});

Deno.test("xmlProblem() wants exactly one root element, named Document", () => {
  assert.match(xmlProblem(DOC("") + DOC(""), 64)!, /exactly one root element/);
  assert.match(xmlProblem("", 64)!, /must have a root element/);
  assert.match(xmlProblem("just text", 64)!, /text outside the root element/);
  assert.match(xmlProblem(`${DOC("")}trailing`, 64)!, /text outside the root element/);
  assert.match(xmlProblem("<Pain/>", 64)!, /root element "Document", not "Pain"/);
});

Deno.test("xmlProblem() rejects a DOCTYPE, so no entity expansion or external entity", () => {
  const bomb = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]>${DOC("&lol;")}`;
  assert.match(xmlProblem(bomb, 64)!, /must not contain a document type declaration/);
  const xxe = `<!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>${DOC("&x;")}`;
  assert.match(xmlProblem(xxe, 64)!, /document type declaration/);
});

Deno.test("xmlProblem() rejects undefined entities, bad character references and stray ampersands", () => {
  assert.match(xmlProblem(DOC("&nbsp;"), 64)!, /uses an entity other than/);
  assert.match(xmlProblem(DOC("a & b"), 64)!, /uses an entity other than/);
  assert.match(xmlProblem(DOC("&#0;"), 64)!, /not allowed in XML/);
  assert.match(xmlProblem(DOC(`<A b="&bogus;"/>`), 64)!, /attribute "b" uses an entity/);
});

Deno.test("xmlProblem() rejects malformed attributes and repeated ones", () => {
  assert.match(xmlProblem(DOC(`<A b=1/>`), 64)!, /malformed start tag/);
  assert.match(xmlProblem(DOC(`<A b="1" b="2"/>`), 64)!, /repeats the attribute "b"/);
  assert.match(xmlProblem(DOC(`<A b="<"/>`), 64)!, /malformed start tag/);
  assert.match(xmlProblem(DOC(`<1A/>`), 64)!, /malformed start tag/);
});

Deno.test("xmlProblem() rejects other encodings, forbidden characters, bad comments and deep nesting", () => {
  assert.match(
    xmlProblem(`<?xml version="1.0" encoding="ISO-8859-1"?>${DOC("")}`, 64)!,
    /UTF-8, not "ISO-8859-1"/,
  );
  assert.match(xmlProblem(`<?xml version=1.0?>${DOC("")}`, 64)!, /declaration is malformed/);
  assert.match(xmlProblem(DOC("\u0001"), 64)!, /character not allowed/);
  assert.match(xmlProblem(DOC("<!-- a -- b -->"), 64)!, /malformed comment/);
  assert.match(xmlProblem(DOC("]]>"), 64)!, /"\]\]>" in character data/);
  assert.match(xmlProblem(DOC("<a>".repeat(10) + "</a>".repeat(10)), 8)!, /deeper than 8/);
  // Document and seven more levels are eight: the limit itself is allowed, one more is not.
  assert.equal(xmlProblem(DOC("<a>".repeat(7) + "</a>".repeat(7)), 8), undefined);
  assert.match(xmlProblem(DOC("<a>".repeat(8) + "</a>".repeat(8)), 8)!, /deeper than 8/);
  assert.match(
    xmlProblem(`${DOC("")}<?xml version="1.0"?>`, 64)!,
    /malformed processing instruction/,
  );
});

Deno.test("xmlProblem() refuses XInclude in any prefix or spelling of its namespace", () => {
  for (
    const body of [
      `<Document xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="a"/></Document>`,
      `<Document><x:include xmlns:x=" http://www.w3.org/2001/XInclude" href="a"/></Document>`,
      `<Document xmlns:xi='http://www.w3.org/2001/&#x58;Include'/>`,
      `<Document><include xmlns="http://www.w3.org/2003/XInclude" href="a"/></Document>`,
      `<Document><xi:include href="a"/></Document>`,
    ]
  ) {
    assert.equal(xmlProblem(body, 64), "The XML body must not use XInclude", body);
  }
  assert.equal(
    xmlProblem(`<Document xmlns:a="urn:x:XInclude"><a:include/></Document>`, 64),
    undefined,
  );
});

Deno.test("xmlProblem() refuses schema locations unless allowed", () => {
  const xsi = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"';
  const located = `<Document ${xsi} xsi:schemaLocation="urn:x http://a.example/x.xsd"/>`;
  assert.equal(
    xmlProblem(located, 64),
    'The XML body must not carry the schema location attribute "xsi:schemaLocation"',
  );
  assert.match(
    xmlProblem(`<Document><A ${xsi} xsi:noNamespaceSchemaLocation="x.xsd"/></Document>`, 64)!,
    /"xsi:noNamespaceSchemaLocation"/,
  );
  assert.equal(xmlProblem(located, 64, { allowSchemaLocation: true }), undefined);
});
