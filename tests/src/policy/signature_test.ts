/** Signed policies: a detached JWS over the file's bytes, verified with the deployment's key. */
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { PIPELINE } from "../../../middleware/mod.ts";
import { KEY_VARIABLE, verifyPolicySignature } from "../../../src/policy/signature.ts";
import { PolicyError } from "../../../src/policy/load.ts";
import { policySign, signPolicy } from "../../../src/cli/policy_sign.ts";
import { loadPolicyFile, openPolicy } from "../../../src/http/live_policy.ts";
import { defaultServices } from "../../../src/policy/services.ts";
import { memoryLogger } from "../../../src/lib/log.ts";

/** A key pair in PEM files, of the type given, and a policy file beside them. */
async function rig(type: "ed25519" | "ec" = "ed25519") {
  const dir = await Deno.makeTempDir();
  const pair = type === "ec"
    ? generateKeyPairSync("ec", { namedCurve: "P-256" })
    : generateKeyPairSync("ed25519");
  const key = `${dir}/signing.pem`;
  const pub = `${dir}/signing.pub.pem`;
  await Deno.writeTextFile(key, pair.privateKey.export({ type: "pkcs8", format: "pem" }) as string);
  await Deno.writeTextFile(pub, pair.publicKey.export({ type: "spki", format: "pem" }) as string);
  const file = `${dir}/policy.yaml`;
  await Deno.writeTextFile(file, 'upstream: { url: "http://127.0.0.1:9" }\n');
  return { dir, key, pub, file };
}

async function sign(file: string, key: string) {
  await Deno.writeTextFile(
    `${file}.sig`,
    await signPolicy(await Deno.readFile(file), await Deno.readTextFile(key)),
  );
}

Deno.test("verifyPolicySignature() accepts the file it signed, with Ed25519 and P-256", async () => {
  for (const type of ["ed25519", "ec"] as const) {
    const { key, pub, file } = await rig(type);
    await sign(file, key);
    await verifyPolicySignature(file, await Deno.readFile(file), { key: pub });
    assert.match(await Deno.readTextFile(`${file}.sig`), /^[\w-]+\.\.[\w-]+$/);
  }
});

Deno.test("verifyPolicySignature() refuses a changed file, a missing signature, another key", async () => {
  const { key, pub, file } = await rig();
  await sign(file, key);
  const bytes = await Deno.readFile(file);
  const changed = new TextEncoder().encode(new TextDecoder().decode(bytes) + "# one more line\n");
  await assert.rejects(
    verifyPolicySignature(file, changed, { key: pub }),
    (e: unknown) => e instanceof PolicyError && /does not verify/.test(e.problems[0]),
  );
  await assert.rejects(
    verifyPolicySignature(file, bytes, { key: pub, signature: `${file}.none` }),
    (e: unknown) => e instanceof PolicyError && /must be signed/.test(e.problems[0]),
  );
  const other = await rig();
  await assert.rejects(
    verifyPolicySignature(file, bytes, { key: other.pub }),
    (e: unknown) => e instanceof PolicyError && /does not verify/.test(e.problems[0]),
  );
  // Without a key named, nothing is asked of the file.
  await verifyPolicySignature(file, changed, {});
});

Deno.test("verifyPolicySignature() lets the key, not the header, decide the algorithm", async () => {
  const { key, pub, file } = await rig();
  await sign(file, key);
  const [, , signature] = (await Deno.readTextFile(`${file}.sig`)).trim().split(".");
  const none = btoa(JSON.stringify({ alg: "HS256" })).replace(/=+$/, "");
  await Deno.writeTextFile(`${file}.sig`, `${none}..${signature}`);
  await assert.rejects(
    verifyPolicySignature(file, await Deno.readFile(file), { key: pub }),
    PolicyError,
  );
});

Deno.test("policySign() writes <file>.sig that the gateway's loading verifies", async () => {
  const { key, pub, file } = await rig();
  const log = console.log;
  console.log = () => {};
  try {
    assert.equal(await policySign(["--key", key, file]), 0);
    assert.equal(await policySign(["--key", pub, file]), 1); // a public key cannot sign
  } finally {
    console.log = log;
  }
  await verifyPolicySignature(file, await Deno.readFile(file), { key: pub });
});

Deno.test("a reload with a bad signature is refused and the running policy keeps serving", async () => {
  const { key, pub, file } = await rig();
  await sign(file, key);
  Deno.env.set(KEY_VARIABLE, pub);
  try {
    const loaded = await loadPolicyFile(file, PIPELINE);
    const log = memoryLogger();
    const live = await openPolicy({
      file,
      pipeline: PIPELINE,
      loaded,
      services: defaultServices({ log }),
    });
    try {
      await Deno.writeTextFile(file, 'upstream: { url: "http://127.0.0.1:8" }\n');
      assert.equal(await live.reload(), false);
      const refused = log.lines.find((l) => l.outcome === "refused")!;
      assert.match(String((refused.problems as string[])[0]), /does not verify/);
      await sign(file, key);
      assert.equal(await live.reload(), true);
    } finally {
      await live.close();
    }
    await Deno.remove(`${file}.sig`);
    await assert.rejects(loadPolicyFile(file, PIPELINE), PolicyError);
  } finally {
    Deno.env.delete(KEY_VARIABLE);
  }
});
