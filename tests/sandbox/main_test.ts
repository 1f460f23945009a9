import assert from "node:assert/strict";

Deno.test("main.ts serves the sandbox on 127.0.0.1 at SANDBOX_PORT and says where", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-env", "--allow-read", "src/sandbox/main.ts"],
    cwd: new URL("../../", import.meta.url).pathname,
    env: { SANDBOX_PORT: "0" },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
    }
    await reader.cancel();
    const match = out.match(/http:\/\/127\.0\.0\.1:(\d+)/);
    assert.ok(match, out);
    const res = await fetch(`http://127.0.0.1:${match[1]}/v1/products/en?page-size=1`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("Server"), "legacy-core/7.2");
    const body = await res.json();
    assert.equal(
      body._links.next.href,
      `http://127.0.0.1:${match[1]}/v1/products/en?page=1&page-size=1`,
    );
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
});
