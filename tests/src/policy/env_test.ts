import assert from "node:assert/strict";
import { EnvError, gatewayEnv, readEnv } from "../../../src/policy/env.ts";

function read(values: Record<string, string>) {
  return readEnv(gatewayEnv, (name) => values[name]);
}

function problems(values: Record<string, string>): string[] {
  try {
    read(values);
  } catch (error) {
    assert.ok(error instanceof EnvError);
    return error.problems;
  }
  assert.fail("the environment was accepted");
}

Deno.test("readEnv() gives every gateway variable its default, an empty value included", () => {
  const defaults = {
    PORT: 8080,
    HOST: "127.0.0.1",
    GATEWAY_POLICY: "config/policy.yaml",
    GATEWAY_WATCH: true,
    SHUTDOWN_GRACE_MS: 10_000,
  };
  assert.deepEqual(read({}), defaults);
  assert.deepEqual(read({ PORT: "", GATEWAY_WATCH: "" }), defaults);
});

Deno.test("readEnv() reads ports, switches and milliseconds as their types", () => {
  assert.deepEqual(
    read({
      PORT: "0",
      HOST: "0.0.0.0",
      GATEWAY_POLICY: "/etc/xs2a/policy.yaml",
      GATEWAY_WATCH: "false",
      SHUTDOWN_GRACE_MS: "2500",
    }),
    {
      PORT: 0,
      HOST: "0.0.0.0",
      GATEWAY_POLICY: "/etc/xs2a/policy.yaml",
      GATEWAY_WATCH: false,
      SHUTDOWN_GRACE_MS: 2500,
    },
  );
});

Deno.test("readEnv() names every variable that is not of its form", () => {
  assert.deepEqual(problems({ PORT: "abc" }), [
    'Environment variable "PORT" must be a port number (0 to 65535), got "abc"',
  ]);
  assert.deepEqual(problems({ PORT: "70000", GATEWAY_WATCH: "yes", SHUTDOWN_GRACE_MS: "10s" }), [
    'Environment variable "PORT" must be a port number (0 to 65535), got "70000"',
    'Environment variable "GATEWAY_WATCH" must be "true" or "false", got "yes"',
    'Environment variable "SHUTDOWN_GRACE_MS" must be a whole number of milliseconds, got "10s"',
  ]);
  assert.throws(
    () => readEnv(gatewayEnv, () => "-1"),
    /Environment variable "PORT" must be a port number \(0 to 65535\), got "-1"/,
  );
});
