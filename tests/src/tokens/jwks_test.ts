import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, type JWK, jwtVerify, SignJWT } from "jose";
import { keySet, readJwksFile } from "../../../src/tokens/jwks.ts";
import { defaultServices } from "../../../src/policy/services.ts";
import { memoryLogger } from "../../../src/lib/log.ts";
import { startUpstream } from "../../support/upstream.ts";

const first = await generateKeyPair("ES256");
const second = await generateKeyPair("ES256");
const k1: JWK = { ...await exportJWK(first.publicKey), kid: "k1", alg: "ES256", use: "sig" };
const k2: JWK = { ...await exportJWK(second.publicKey), kid: "k2", alg: "ES256", use: "sig" };

function sign(kid: string, key = kid === "k1" ? first.privateKey : second.privateKey) {
  return new SignJWT({ sub: "psu" }).setProtectedHeader({ alg: "ES256", kid }).sign(key);
}

/** Whether `keys` verifies a token signed with the key `kid`. */
async function verifies(keys: ReturnType<typeof keySet>, kid: string): Promise<boolean> {
  try {
    await jwtVerify(await sign(kid), keys);
    return true;
  } catch {
    return false;
  }
}

async function jwksFile(content: unknown): Promise<string> {
  const file = await Deno.makeTempFile({ prefix: "jwks-", suffix: ".json" });
  await Deno.writeTextFile(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

function services() {
  return defaultServices({ log: memoryLogger() });
}

const FILE = { cooldownMs: 30_000, maxAgeMs: 600_000, timeoutMs: 5_000 };

Deno.test("readJwksFile() reads a JWKS file and parses it once while its text is unchanged", async () => {
  const file = await jwksFile({ keys: [k1] });
  const read = readJwksFile(file);
  assert.ok(!(read instanceof Error));
  assert.deepEqual(read.keys.map((k) => k.kid), ["k1"]);
  assert.equal(readJwksFile(file), read, "the same parse");
  await Deno.remove(file);
});

Deno.test("readJwksFile() reads the new keys of a rewritten file", async () => {
  const file = await jwksFile({ keys: [k1] });
  readJwksFile(file);
  await Deno.writeTextFile(file, JSON.stringify({ keys: [k2] }));
  const read = readJwksFile(file);
  assert.ok(!(read instanceof Error));
  assert.deepEqual(read.keys.map((k) => k.kid), ["k2"]);
  await Deno.remove(file);
});

Deno.test("readJwksFile() refuses JSON that is not a JWKS with keys", async () => {
  for (const content of [null, {}, { keys: "k1" }, { keys: {} }, { keys: [] }, 42]) {
    const file = await jwksFile(content);
    const read = readJwksFile(file);
    assert.ok(read instanceof Error, JSON.stringify(content));
    assert.equal(read.message, `"${file}" is not a JWKS with a non-empty "keys" list`);
    await Deno.remove(file);
  }
});

Deno.test("readJwksFile() says why it cannot read a file, and reads it once it can", async () => {
  const file = await jwksFile("{ keys: [");
  const broken = readJwksFile(file);
  assert.ok(broken instanceof Error);
  assert.match(broken.message, new RegExp(`^cannot read "${file}": .*JSON`));
  await Deno.remove(file);
  const missing = readJwksFile(file);
  assert.ok(missing instanceof Error);
  assert.match(missing.message, new RegExp(`^cannot read "${file}": No such file`));
  await Deno.writeTextFile(file, JSON.stringify({ keys: [k1] }));
  const fixed = readJwksFile(file);
  assert.ok(!(fixed instanceof Error), "a read error is not kept");
  assert.deepEqual(fixed.keys.map((k) => k.kid), ["k1"]);
  await Deno.remove(file);
});

Deno.test("keySet() verifies with a file's keys and throws the reason of an unusable file", async () => {
  const file = await jwksFile({ keys: [k1] });
  const keys = keySet({ file, ...FILE }, services());
  assert.equal(keySet({ file, ...FILE }, services()), keys, "one set per file content");
  assert.equal(await verifies(keys, "k1"), true);
  assert.equal(await verifies(keys, "k2"), false);
  const empty = await jwksFile({ keys: [] });
  assert.throws(
    () => keySet({ file: empty, ...FILE }, services()),
    { message: `"${empty}" is not a JWKS with a non-empty "keys" list` },
  );
  await Deno.remove(file);
  await Deno.remove(empty);
});

Deno.test("keySet() takes the new keys of a rewritten file (a reload after a key rotation)", async () => {
  const file = await jwksFile({ keys: [k1] });
  const app = services();
  assert.equal(await verifies(keySet({ file, ...FILE }, app), "k1"), true);
  await Deno.writeTextFile(file, JSON.stringify({ keys: [k2] }));
  const rotated = keySet({ file, ...FILE }, app);
  assert.equal(await verifies(rotated, "k1"), false, "the removed key no longer verifies");
  assert.equal(await verifies(rotated, "k2"), true);
  await Deno.remove(file);
});

/** A JWKS endpoint on 127.0.0.1 whose keys the test can rotate; counts fetches. */
function jwksServer(keys: JWK[]) {
  const state = { keys, fetches: 0, hold: undefined as Promise<void> | undefined };
  const server = startUpstream(async () => {
    state.fetches++;
    await state.hold;
    return Response.json({ keys: state.keys });
  });
  return { state, server, url: `${server.url}/jwks.json` };
}

Deno.test("keySet() makes one set per source and app", async () => {
  const { state, server, url } = jwksServer([k1]);
  await using _server = server;
  const app = services();
  const source = { url, ...FILE };
  const keys = keySet(source, app);
  assert.equal(keySet({ ...source }, app), keys, "same source, same app");
  assert.notEqual(keySet({ ...source, cooldownMs: 1 }, app), keys, "another source");
  const other = keySet(source, services());
  assert.notEqual(other, keys, "another app");
  assert.equal(await verifies(keys, "k1"), true);
  assert.equal(await verifies(keySet(source, app), "k1"), true);
  assert.equal(state.fetches, 1, "the set, and its cache, is shared");
});

Deno.test("keySet() fetches a URL with the app's fetch", async () => {
  const { server, url } = jwksServer([k1]);
  await using _server = server;
  const fetched: string[] = [];
  const app = defaultServices({
    log: memoryLogger(),
    fetch: (input, init) => {
      fetched.push(String(input));
      return fetch(input, init);
    },
  });
  assert.equal(await verifies(keySet({ url, ...FILE }, app), "k1"), true);
  assert.deepEqual(fetched, [url]);
});

Deno.test("keySet() refetches for an unknown kid at most once per cooldown", async () => {
  const { state, server, url } = jwksServer([k1]);
  await using _server = server;
  const keys = keySet({ url, ...FILE, cooldownMs: 1_000 }, services());
  assert.equal(await verifies(keys, "k1"), true);
  state.keys = [k1, k2];
  assert.equal(await verifies(keys, "k2"), false, "within the cooldown: no refetch");
  assert.equal(state.fetches, 1);
  await new Promise((r) => setTimeout(r, 1_100));
  assert.equal(await verifies(keys, "k2"), true, "after it: refetched");
  assert.equal(state.fetches, 2);
});

Deno.test("keySet() fetches the set again after its max age", async () => {
  const { state, server, url } = jwksServer([k1]);
  await using _server = server;
  const keys = keySet({ url, ...FILE, maxAgeMs: 1_000 }, services());
  assert.equal(await verifies(keys, "k1"), true);
  assert.equal(await verifies(keys, "k1"), true);
  assert.equal(state.fetches, 1, "fresh: from the cache");
  state.keys = [k2];
  await new Promise((r) => setTimeout(r, 1_100));
  assert.equal(await verifies(keys, "k1"), false, "stale: fetched again, k1 is gone");
  assert.equal(state.fetches, 2);
});

Deno.test("keySet() gives up a fetch after its timeout", async () => {
  const { state, server, url } = jwksServer([k1]);
  await using _server = server;
  // The server answers only once the fetch was given up.
  const held = Promise.withResolvers<void>();
  state.hold = held.promise;
  const keys = keySet({ url, ...FILE, timeoutMs: 100 }, services());
  await assert.rejects(
    async () => jwtVerify(await sign("k1"), keys),
    { code: "ERR_JWKS_TIMEOUT" },
  ).finally(held.resolve);
});
