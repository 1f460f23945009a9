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
