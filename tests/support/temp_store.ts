/**
 * Durable stores in temporary files for tests: each in a directory of its own, removed when the
 * store is closed.
 */
import { kvStore } from "../../src/store/kv.ts";
import { SqliteStore } from "../../src/store/sqlite.ts";
import type { Store } from "../../src/store/types.ts";

/** `store`, whose close also removes `dir`. */
function removingOnClose<S extends Store>(store: S, dir: string): S {
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  return store;
}

/** A SQLite store in a new temporary directory. */
export async function tempSqlite(): Promise<SqliteStore> {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-sqlite-" });
  return removingOnClose(new SqliteStore({ path: `${dir}/store.sqlite`, prefix: "xs2a:" }), dir);
}

/** A Deno KV store in a new temporary directory. */
export async function tempKv(): Promise<Store> {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-kv-" });
  return removingOnClose(await kvStore({ path: `${dir}/store.kv`, prefix: "xs2a:" }), dir);
}
