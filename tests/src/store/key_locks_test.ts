import assert from "node:assert/strict";
import { KeyLocks } from "../../../src/store/key_locks.ts";

Deno.test("KeyLocks.run() orders operations that share a key and runs the others at once", async () => {
  const locks = new KeyLocks();
  const order: string[] = [];
  let openFirst!: () => void;
  const firstHeld = new Promise<void>((resolve) => openFirst = resolve);
  const first = locks.run(["a", "b"], async () => {
    order.push("first start");
    await firstHeld;
    order.push("first end");
  });
  const second = locks.run(["b"], () => {
    order.push("second");
    return Promise.resolve();
  });
  const other = locks.run(["c"], () => {
    order.push("other");
    return Promise.resolve();
  });
  await other;
  assert.deepEqual(order, ["first start", "other"], "a disjoint key does not wait");
  openFirst();
  await Promise.all([first, second]);
  assert.deepEqual(order, ["first start", "other", "first end", "second"]);
  assert.equal(locks.size, 0, "no key is held once all ended");
});

Deno.test("KeyLocks.run() releases a key when its operation throws", async () => {
  const locks = new KeyLocks();
  await assert.rejects(locks.run(["a"], () => Promise.reject(new Error("boom"))), /boom/);
  assert.equal(await locks.run(["a"], () => Promise.resolve(7)), 7);
  assert.equal(locks.size, 0);
});

Deno.test("KeyLocks.run() gives up waiting after its bound, and the key is free once all ended", async () => {
  const locks = new KeyLocks();
  let end!: () => void;
  const stuck = locks.run(["a"], () => new Promise<void>((resolve) => end = resolve));
  let ran = false;
  await assert.rejects(
    locks.run(["a"], () => {
      ran = true;
      return Promise.resolve();
    }, { ms: 20, late: () => new Error("late") }),
    /late/,
  );
  assert.equal(ran, false, "a late operation does not run");
  end();
  await stuck;
  assert.equal(locks.size, 0);
  assert.equal(await locks.run(["a"], () => Promise.resolve(1)), 1);
});
