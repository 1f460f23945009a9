/** `psu_ip_port`: PSU-IP-Port, wherever it is sent, is a TCP port number (1-65535). */
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { headerError, takes } from "./_headers.ts";
import { PORT } from "../src/bodies/headers.ts";

export const psuIpPort = defineCheck({
  key: "psu_ip_port",
  description: "PSU-IP-Port must be a port number",
  options: modal({}),
  create(_options, { operation }) {
    if (!takes(operation, "psu-ip-port")) return undefined;
    return (c, next) => {
      const value = requestHeaders(c).get("psu-ip-port");
      if (value !== null && !(PORT.test(value) && Number(value) <= 65535)) {
        throw headerError(
          "psu-ip-port",
          'Header "PSU-IP-Port" must be a port number from 1 to 65535, without leading zeros',
        );
      }
      return next();
    };
  },
});
