/**
 * config/monitoring: the alert rules and the dashboard name only metrics the gateway exports, and
 * the alerts an operator must act on are there.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { createMetrics } from "../../src/lib/metrics.ts";

const root = new URL("../../config/monitoring/", import.meta.url);
const rules = parse(await Deno.readTextFile(new URL("alerts.yaml", root))) as {
  groups: {
    name: string;
    rules: { alert: string; expr: string; labels: { severity: string } }[];
  }[];
};
const dashboard = JSON.parse(await Deno.readTextFile(new URL("dashboard.json", root))) as {
  panels: { title: string; targets: { expr: string }[] }[];
};

/** The metric families the gateway exports, and the series names of its histograms. */
function exported(): Set<string> {
  const names = new Set<string>();
  for (const family of createMetrics().snapshot()) {
    names.add(family.name);
    if (family.type === "histogram") {
      for (const suffix of ["_bucket", "_sum", "_count"]) names.add(family.name + suffix);
    }
  }
  return names;
}

/** The xs2a_ metric names an expression uses. */
function named(expr: string): string[] {
  return [...expr.matchAll(/\bxs2a_[a-z0-9_]+/g)].map((m) => m[0]);
}

Deno.test("monitoring: every metric the alert rules name is one the gateway exports", () => {
  const known = exported();
  const exprs = rules.groups.flatMap((g) => g.rules.map((r) => r.expr));
  const used = exprs.flatMap(named);
  assert.ok(used.length > 0);
  assert.deepEqual(used.filter((name) => !known.has(name)), []);
});

Deno.test("monitoring: every metric the dashboard names is one the gateway exports", () => {
  const known = exported();
  const used = dashboard.panels.flatMap((p) => p.targets.flatMap((t) => named(t.expr)));
  assert.ok(used.length >= dashboard.panels.length);
  assert.deepEqual(used.filter((name) => !known.has(name)), []);
});

Deno.test("monitoring: the alerts cover an open circuit, the store, revocation and refusals per TPP", () => {
  const byAlert = new Map(rules.groups.flatMap((g) => g.rules.map((r) => [r.alert, r])));
  const expected: Record<string, string> = {
    Xs2aCircuitOpen: "xs2a_circuits_open",
    Xs2aStoreFull: "xs2a_store_full_total",
    Xs2aStoreDown: "xs2a_store_errors_total",
    Xs2aRevocationSourcesFailing: "xs2a_revocation_lookups_total",
    Xs2aTppRefusalRateRising: "xs2a_tpp_refusals_total",
  };
  for (const [alert, metric] of Object.entries(expected)) {
    const rule = byAlert.get(alert);
    assert.ok(rule, `alert ${alert}`);
    assert.ok(named(rule.expr).includes(metric), `${alert} uses ${metric}`);
    assert.match(rule.labels.severity, /^(critical|warning|info)$/);
  }
});
