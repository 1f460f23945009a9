import assert from "node:assert/strict";
import { passthroughPolicy, policyYaml } from "../../support/policies.ts";
import { closedPort, startUpstream } from "../../support/upstream.ts";
import { startMain } from "../../support/main_process.ts";

interface ExportedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: { key: string; value: { stringValue?: string; intValue?: string } }[];
}

/** An OTLP/HTTP collector (JSON encoding) on 127.0.0.1 that keeps the spans it is sent. */
function startCollector() {
  const spans: ExportedSpan[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.text();
    if (new URL(req.url).pathname === "/v1/traces") {
      for (const resource of JSON.parse(body).resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) spans.push(...scope.spans);
      }
    }
    return Response.json({});
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, spans, close: () => server.shutdown() };
}

Deno.test("annotateSpan() names the request span after the operation and adds its attributes (OTEL_DENO=true)", async () => {
  await using upstream = startUpstream();
  const collector = startCollector();
  const policy = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.writeTextFile(policy, policyYaml(passthroughPolicy()));
  const port = closedPort();
  const id = crypto.randomUUID();
  const { child, stderr } = await startMain(["--policy", policy], {
    env: {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      UPSTREAM_URL: upstream.url,
      PORT: String(port),
    },
  });
  try {
    const response = await fetch(`http://127.0.0.1:${port}/v1/accounts/acc-1/balances`, {
      headers: { "x-request-id": id, "consent-id": "c-1" },
    });
    assert.equal(response.status, 200);
    await response.body?.cancel();
  } finally {
    // Spans are exported in batches and at exit.
    child.kill("SIGTERM");
    await child.status;
    await stderr.cancel();
    await child.stdout.cancel();
    await collector.close();
    await Deno.remove(policy);
  }
  const server = collector.spans.find((span) => span.kind === 2);
  assert.ok(server, `a server span was exported: ${JSON.stringify(collector.spans)}`);
  assert.equal(server.name, "GET /v1/accounts/{account-id}/balances");
  const attribute = (key: string) =>
    server.attributes.find((a) => a.key === key)?.value.stringValue;
  assert.equal(attribute("http.route"), "/v1/accounts/{account-id}/balances");
  assert.equal(attribute("xs2a.operation"), "getBalances");
  assert.equal(attribute("xs2a.request_id"), id);
  // The upstream exchange is a client span under it, and the core got its trace context.
  const client = collector.spans.find((span) => span.kind === 3);
  assert.ok(client, `a client span was exported: ${JSON.stringify(collector.spans)}`);
  assert.equal(client.traceId, server.traceId);
  assert.equal(client.parentSpanId, server.spanId);
  assert.equal(
    upstream.received[0].headers.get("traceparent"),
    `00-${client.traceId}-${client.spanId}-01`,
  );
});
