/** `psu_device_id`: PSU-Device-ID, wherever it is sent, is a UUID. */
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { headerError, takes, UUID } from "./_headers.ts";

export const psuDeviceId = defineCheck({
  key: "psu_device_id",
  description: "PSU-Device-ID must be a UUID",
  options: modal({}),
  create(_options, { operation }) {
    if (!takes(operation, "psu-device-id")) return undefined;
    return (c, next) => {
      const value = requestHeaders(c).get("psu-device-id");
      if (value !== null && !UUID.test(value)) {
        throw headerError(
          "psu-device-id",
          'Header "PSU-Device-ID" must be a UUID like 99391c7e-ad88-49ec-a2ad-99ddcb1f7721',
        );
      }
      return next();
    };
  },
});
