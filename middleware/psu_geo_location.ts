/**
 * `psu_geo_location`: PSU-Geo-Location looks like `GEO:<latitude>;<longitude>` as the interface
 * describes it (latitude: optional minus, 1-2 integer digits, dot, six decimals; longitude:
 * optional minus, 1-3 integer digits, dot, decimals), with latitude and longitude in range.
 */
import { z } from "zod";
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { headerError, takes } from "./_headers.ts";
import { geoPattern } from "../src/bodies/headers.ts";

const NAME = "psu-geo-location";

export const psuGeoLocation = defineCheck({
  key: "psu_geo_location",
  description: "PSU-Geo-Location must look like GEO:<lat>;<long>",
  options: modal({
    longitude_six_decimals: z.boolean().default(false).describe(
      "Require exactly six longitude decimals as the Berlin Group pattern does (the interface document only says decimals)",
    ),
  }),
  create(options, { operation }) {
    if (!takes(operation, NAME)) return undefined;
    const pattern = geoPattern(options.longitude_six_decimals);
    const shape = `GEO:<lat>;<long>, like GEO:41.716667;44.783333 (latitude with six decimals${
      options.longitude_six_decimals ? ", longitude with six decimals" : ""
    })`;
    return (c, next) => {
      const value = requestHeaders(c).get(NAME);
      if (value === null) return next();
      const match = pattern.exec(value);
      if (!match) {
        if (pattern.test(value.replace(",", ";"))) {
          throw headerError(
            NAME,
            'Header "PSU-Geo-Location" must separate latitude and longitude with a semicolon, not a comma',
          );
        }
        throw headerError(NAME, `Header "PSU-Geo-Location" must look like ${shape}`);
      }
      if (Math.abs(Number(match[1])) > 90 || Math.abs(Number(match[2])) > 180) {
        throw headerError(
          NAME,
          'Header "PSU-Geo-Location" must have a latitude within -90..90 and a longitude within -180..180',
        );
      }
      return next();
    };
  },
});
