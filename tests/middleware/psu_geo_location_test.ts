import assert from "node:assert/strict";
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { REQUEST_ID } from "../support/requests.ts";

const READ = { "x-request-id": REQUEST_ID, "consent-id": "c-1" };

function geo(value: string) {
  return { headers: { ...READ, "psu-geo-location": value } };
}

Deno.test("psuGeoLocation() accepts GEO:<lat>;<long> as the interface describes it", async () => {
  await using t = await rig(policy());
  const good = ["GEO:41.716667;44.783333", "GEO:-9.123456;-179.5", "GEO:0.000000;0.0"];
  for (const [i, value] of good.entries()) {
    assertForwarded(await t.call("/v1/accounts", geo(value)), t.upstream, i + 1);
  }
});

Deno.test("psuGeoLocation() rejects a comma between latitude and longitude", async () => {
  await using t = await rig(policy());
  assertRejected(await t.call("/v1/accounts", geo("GEO:41.716667,44.783333")), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "PSU-Geo-Location",
    text: /semicolon, not a comma/,
  }, t.upstream);
});

Deno.test("psuGeoLocation() rejects other shapes", async () => {
  await using t = await rig(policy());
  const bad = [
    "41.716667;44.783333",
    "geo:41.716667;44.783333",
    "GEO:41.71667;44.783333",
    "GEO:141.716667;44.783333",
    "GEO:41.716667;4444.783333",
    "GEO:41.716667;44",
    "GEO:41.716667;44.783333;1",
    "GEO: 41.716667;44.783333",
  ];
  for (const value of bad) {
    assertRejected(await t.call("/v1/accounts", geo(value)), {
      status: 400,
      code: "FORMAT_ERROR",
      path: "PSU-Geo-Location",
      text: /must look like GEO:<lat>;<long>/,
    }, t.upstream);
  }
});

Deno.test("psuGeoLocation() rejects a latitude or longitude out of range", async () => {
  await using t = await rig(policy());
  for (const value of ["GEO:91.000000;10.0", "GEO:10.000000;-180.5"]) {
    assertRejected(await t.call("/v1/accounts", geo(value)), {
      status: 400,
      code: "FORMAT_ERROR",
      path: "PSU-Geo-Location",
      text: /within -90\.\.90/,
    }, t.upstream);
  }
});

Deno.test("psuGeoLocation() requires six longitude decimals when the policy says so", async () => {
  await using t = await rig(policy({ psu_geo_location: { longitude_six_decimals: true } }));
  assertRejected(await t.call("/v1/accounts", geo("GEO:41.716667;44.7833")), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "PSU-Geo-Location",
  }, t.upstream);
  assertForwarded(await t.call("/v1/accounts", geo("GEO:41.716667;44.783300")), t.upstream);
});

Deno.test("psuGeoLocation() does not judge operations that do not take the header", async () => {
  await using t = await rig(policy());
  assertForwarded(
    await t.call("/v1/products/en", { headers: { "psu-geo-location": "nowhere" } }),
    t.upstream,
  );
});

Deno.test("psuGeoLocation() accepts the range's edges and refuses just past them, either sign", async () => {
  await using t = await rig(policy());
  const edges = ["GEO:90.000000;180.0", "GEO:-90.000000;-180.0"];
  for (const [i, value] of edges.entries()) {
    assertForwarded(await t.call("/v1/accounts", geo(value)), t.upstream, i + 1);
  }
  for (const value of ["GEO:-90.000001;0.0", "GEO:0.000000;180.000001", "GEO:90.000001;0.0"]) {
    assertRejected(
      await t.call("/v1/accounts", geo(value)),
      {
        status: 400,
        code: "FORMAT_ERROR",
        path: "PSU-Geo-Location",
        text:
          /^Header "PSU-Geo-Location" must have a latitude within -90\.\.90 and a longitude within -180\.\.180$/,
      },
      t.upstream,
      edges.length,
    );
  }
});

Deno.test("psuGeoLocation() says which shape it expects, with six longitude decimals when required", async () => {
  {
    await using t = await rig(policy());
    const outcome = await t.call("/v1/accounts", geo("GEO:1;2"));
    assert.equal(
      outcome.text,
      'Header "PSU-Geo-Location" must look like GEO:<lat>;<long>, like GEO:41.716667;44.783333 (latitude with six decimals)',
    );
    const comma = await t.call("/v1/accounts", geo("GEO:41.716667,44.783333"));
    assert.equal(
      comma.text,
      'Header "PSU-Geo-Location" must separate latitude and longitude with a semicolon, not a comma',
    );
  }
  await using t = await rig(policy({ psu_geo_location: { longitude_six_decimals: true } }));
  const outcome = await t.call("/v1/accounts", geo("GEO:41.716667;44.7833"));
  assert.equal(
    outcome.text,
    'Header "PSU-Geo-Location" must look like GEO:<lat>;<long>, like GEO:41.716667;44.783333 (latitude with six decimals, longitude with six decimals)',
  );
  // A comma with the wrong number of longitude decimals is a wrong shape, not only a wrong comma.
  const comma = await t.call("/v1/accounts", geo("GEO:41.716667,44.7833"));
  assert.match(comma.text ?? "", /must look like GEO:<lat>;<long>/);
});

Deno.test("psuGeoLocation() lets a read without the header through", async () => {
  await using t = await rig(policy());
  assertForwarded(await t.call("/v1/accounts", { headers: READ }), t.upstream);
});
