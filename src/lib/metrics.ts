/**
 * Prometheus metrics: counters and histograms with labels, rendered in the text exposition
 * format. Small on purpose: the gateway needs a handful of series and no client library's
 * process collectors or Node-only dependencies.
 *
 * Every metric can be taken as a snapshot (plain data), and snapshots add up: under
 * `deno serve --parallel` a scrape that reaches one worker renders the sum of every worker's
 * snapshot (see `src/http/workers.ts`), so each scrape sees the whole process.
 */

type Labels = Record<string, string>;

/** One metric family as plain data: what workers exchange and what is rendered. */
export type FamilySnapshot =
  | { type: "counter"; name: string; help: string; series: Record<string, number> }
  | {
    type: "gauge";
    name: string;
    help: string;
    value?: number;
    /** Per label set, for a gauge with labels. */
    series?: Record<string, number>;
  }
  | {
    type: "histogram";
    name: string;
    help: string;
    buckets: number[];
    /** Per label set: observations per bucket (not cumulative), their sum and count. */
    series: Record<string, { counts: number[]; sum: number; count: number }>;
  };

/** Every metric family of one worker, in the order they are rendered. */
export type MetricsSnapshot = FamilySnapshot[];

/** The sum of several workers' snapshots (families matched by name, series by label set). */
export function mergeSnapshots(snapshots: MetricsSnapshot[]): MetricsSnapshot {
  const merged = new Map<string, FamilySnapshot>();
  for (const snapshot of snapshots) {
    for (const family of snapshot) {
      const into = merged.get(family.name);
      if (!into || into.type !== family.type) {
        merged.set(family.name, structuredClone(family));
      } else if (into.type === "counter" && family.type === "counter") {
        for (const [key, value] of Object.entries(family.series)) {
          into.series[key] = (into.series[key] ?? 0) + value;
        }
      } else if (into.type === "gauge" && family.type === "gauge") {
        if (family.value !== undefined) into.value = (into.value ?? 0) + family.value;
        for (const [key, value] of Object.entries(family.series ?? {})) {
          into.series ??= {};
          into.series[key] = (into.series[key] ?? 0) + value;
        }
      } else if (into.type === "histogram" && family.type === "histogram") {
        for (const [key, series] of Object.entries(family.series)) {
          const sum = into.series[key] ??= {
            counts: series.counts.map(() => 0),
            sum: 0,
            count: 0,
          };
          series.counts.forEach((n, i) => sum.counts[i] = (sum.counts[i] ?? 0) + n);
          sum.sum += series.sum;
          sum.count += series.count;
        }
      }
    }
  }
  return [...merged.values()];
}

/** The text exposition of one family ("" for a gauge without a value). */
function renderFamily(family: FamilySnapshot): string {
  const { name, help } = family;
  if (family.type === "gauge") {
    if (family.series) {
      const keys = Object.keys(family.series);
      if (keys.length === 0) return "";
      const lines = keys.map((key) => `${name}{${key}} ${family.series![key]}`);
      return [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, ...lines].join("\n");
    }
    if (family.value === undefined) return "";
    return `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name} ${family.value}`;
  }
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${family.type}`];
  if (family.type === "counter") {
    for (const [key, value] of Object.entries(family.series)) {
      lines.push(`${name}${key ? `{${key}}` : ""} ${value}`);
    }
    return lines.join("\n");
  }
  for (const [key, series] of Object.entries(family.series)) {
    const prefix = key ? `${key},` : "";
    let cumulative = 0;
    family.buckets.forEach((le, i) => {
      cumulative += series.counts[i];
      lines.push(`${name}_bucket{${prefix}le="${le}"} ${cumulative}`);
    });
    lines.push(`${name}_bucket{${prefix}le="+Inf"} ${series.count}`);
    lines.push(`${name}_sum${key ? `{${key}}` : ""} ${series.sum}`);
    lines.push(`${name}_count${key ? `{${key}}` : ""} ${series.count}`);
  }
  return lines.join("\n");
}

/** The Prometheus text exposition of a snapshot. */
export function renderSnapshot(snapshot: MetricsSnapshot): string {
  return snapshot.map(renderFamily).filter((t) => t !== "").join("\n") + "\n";
}

const keys = new Map<string, string>();

/** The rendered label set, cached by its values (a metric always uses the same label names). */
function labelKey(labels: Labels): string {
  let id = "";
  for (const name in labels) id += name + "\u0000" + labels[name] + "\u0000";
  let key = keys.get(id);
  if (key === undefined) {
    key = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, "\\$&")}"`)
      .join(",");
    if (keys.size < 10_000) keys.set(id, key);
  }
  return key;
}

/** One counter series; callers on a hot path keep it instead of passing labels each time. */
export interface CounterCell {
  value: number;
}

/** A counter per label set. */
export class Counter {
  readonly #cells = new Map<string, CounterCell>();
  constructor(readonly name: string, readonly help: string) {}

  /** The series of one label set (created at 0). */
  cell(labels: Labels = {}): CounterCell {
    const key = labelKey(labels);
    let cell = this.#cells.get(key);
    if (!cell) {
      cell = { value: 0 };
      this.#cells.set(key, cell);
    }
    return cell;
  }

  inc(labels: Labels = {}, by = 1): void {
    this.cell(labels).value += by;
  }

  /** The current value of one label set (0 when never counted). */
  value(labels: Labels = {}): number {
    return this.#cells.get(labelKey(labels))?.value ?? 0;
  }

  snapshot(): FamilySnapshot {
    const series: Record<string, number> = {};
    for (const [key, cell] of this.#cells) series[key] = cell.value;
    return { type: "counter", name: this.name, help: this.help, series };
  }

  render(): string {
    return renderFamily(this.snapshot());
  }
}

/** One histogram series: observations per bucket (not cumulative), their sum and count. */
export class HistogramSeries {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(readonly buckets: readonly number[]) {
    this.counts = buckets.map(() => 0);
  }

  observe(seconds: number): void {
    const buckets = this.buckets;
    let i = 0;
    while (i < buckets.length && seconds > buckets[i]) i++;
    if (i < buckets.length) this.counts[i]++;
    this.sum += seconds;
    this.count++;
  }
}

/** A histogram per label set, with fixed buckets (seconds). */
export class Histogram {
  readonly #series = new Map<string, HistogramSeries>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[] = [
      0.001,
      0.0025,
      0.005,
      0.01,
      0.025,
      0.05,
      0.1,
      0.25,
      0.5,
      1,
      2.5,
      5,
      10,
    ],
  ) {}

  /** The series of one label set; callers on a hot path keep it. */
  series(labels: Labels = {}): HistogramSeries {
    const key = labelKey(labels);
    let series = this.#series.get(key);
    if (!series) {
      series = new HistogramSeries(this.buckets);
      this.#series.set(key, series);
    }
    return series;
  }

  observe(labels: Labels, seconds: number): void {
    this.series(labels).observe(seconds);
  }

  /** Number of observations of one label set. */
  count(labels: Labels = {}): number {
    return this.#series.get(labelKey(labels))?.count ?? 0;
  }

  snapshot(): FamilySnapshot {
    const series: Record<string, { counts: number[]; sum: number; count: number }> = {};
    for (const [key, { counts, sum, count }] of this.#series) {
      series[key] = { counts: [...counts], sum, count };
    }
    return {
      type: "histogram",
      name: this.name,
      help: this.help,
      buckets: [...this.buckets],
      series,
    };
  }

  render(): string {
    return renderFamily(this.snapshot());
  }
}

/**
 * A value read when the metrics are rendered; nothing is rendered until a source is set. A
 * counter kept elsewhere (the store's own) is read the same way, with type `counter`.
 */
export class Gauge {
  #read?: () => number | undefined;
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "gauge" | "counter" = "gauge",
  ) {}

  /** Reads the value from `read` at each scrape (undefined: not rendered). */
  track(read: () => number | undefined): void {
    this.#read = read;
  }

  snapshot(): FamilySnapshot {
    const value = this.#read?.();
    const { name, help } = this;
    if (this.type === "counter") {
      return { type: "counter", name, help, series: value === undefined ? {} : { "": value } };
    }
    return { type: "gauge", name, help, value };
  }

  render(): string {
    return renderFamily(this.snapshot());
  }
}

/** Values per label set, read when the metrics are rendered (nothing until a source is set). */
export class LabeledGauge {
  #read?: () => Iterable<[Labels, number]>;
  constructor(readonly name: string, readonly help: string) {}

  /** Reads the series from `read` at each scrape. */
  track(read: () => Iterable<[Labels, number]>): void {
    this.#read = read;
  }

  snapshot(): FamilySnapshot {
    const series: Record<string, number> = {};
    for (const [labels, value] of this.#read?.() ?? []) series[labelKey(labels)] = value;
    return { type: "gauge", name: this.name, help: this.help, series };
  }

  render(): string {
    return renderFamily(this.snapshot());
  }
}

/** Every metric the gateway exports. */
export function createMetrics() {
  const metrics = {
    requests: new Counter("xs2a_requests_total", "Requests by operation and status"),
    rejections: new Counter(
      "xs2a_rejections_total",
      "Requests rejected by a check, by check and Berlin Group code",
    ),
    reported: new Counter(
      "xs2a_report_findings_total",
      "Violations a check in report mode would have rejected, by check and code",
    ),
    requestSeconds: new Histogram(
      "xs2a_request_duration_seconds",
      "Time from request to response in the gateway, by operation",
    ),
    upstreamSeconds: new Histogram(
      "xs2a_upstream_duration_seconds",
      "Time the upstream took to answer, by operation",
    ),
    storeSeconds: new Histogram("xs2a_store_duration_seconds", "Store round trip time"),
    storeErrors: new Counter("xs2a_store_errors_total", "Store calls that failed, by check"),
    rateLimit: new Counter("xs2a_rate_limit_decisions_total", "Rate limit decisions by outcome"),
    replays: new Counter("xs2a_replays_total", "Stored first responses served again"),
    reloads: new Counter("xs2a_policy_reloads_total", "Policy reloads by outcome"),
    revocation: new Counter(
      "xs2a_revocation_lookups_total",
      "Revocation statuses fetched, by source (ocsp, crl, stapled) and outcome (good, revoked, unknown, unavailable)",
    ),
    revocationSoftPasses: new Counter(
      "xs2a_revocation_soft_passes_total",
      "Requests passed under revocation: soft without a status (unreachable responder, no source), by check",
    ),
    introspection: new Counter(
      "xs2a_token_introspections_total",
      "Token introspection requests, by outcome (active, inactive, unavailable)",
    ),
    register: new Counter(
      "xs2a_tpp_register_loads_total",
      "Loads of the TPP register, by outcome (loaded, failed)",
    ),
    shed: new Counter(
      "xs2a_upstream_shed_total",
      "Requests shed by a concurrency limit towards the core, by pool and reason (full, timeout)",
    ),
    upstreamLimit: new LabeledGauge(
      "xs2a_upstream_limit",
      "Requests a concurrency pool lets reach the core at once now (adaptive pools move it), by pool",
    ),
    upstreamInFlight: new LabeledGauge(
      "xs2a_upstream_in_flight",
      "Requests holding a slot of a concurrency pool now, by pool",
    ),
    upstreamQueued: new LabeledGauge(
      "xs2a_upstream_queued",
      "Requests waiting for a slot of a concurrency pool now, by pool",
    ),
    circuitTransitions: new Counter(
      "xs2a_circuit_transitions_total",
      "Changes of a circuit breaker's state towards the core, by circuit and new state",
    ),
    circuitRejections: new Counter(
      "xs2a_circuit_rejections_total",
      "Requests answered 503 by an open (or probing half-open) circuit, by circuit",
    ),
    circuitsOpen: new Gauge("xs2a_circuits_open", "Circuit breakers open now"),
    catalogueCache: new Counter(
      "xs2a_catalogue_cache_total",
      "Product catalogue requests by cache result (hit, miss, not_modified)",
    ),
    consentScope: new Counter(
      "xs2a_consent_scope_total",
      "Account reads judged against the consent's scope, by operation and result (allowed, refused, unknown)",
    ),
    basketScope: new Counter(
      "xs2a_basket_scope_total",
      "Signing basket requests judged by whose payments, consents and basket they name, by operation and result (allowed, refused, unknown)",
    ),
    storeEntries: new Gauge(
      "xs2a_store_entries",
      "Entries held by the in-process (memory) store, expired ones not yet swept included",
    ),
    storeBytes: new Gauge(
      "xs2a_store_bytes",
      "Estimated bytes held by the in-process (memory) store (store.max_bytes bounds it)",
    ),
    storeMaxEntries: new Gauge(
      "xs2a_store_max_entries",
      "Most entries the in-process (memory) store holds (store.max_entries)",
    ),
    storeMaxBytes: new Gauge(
      "xs2a_store_max_bytes",
      "Most estimated bytes the in-process (memory) store holds (store.max_bytes)",
    ),
    storeFull: new Gauge(
      "xs2a_store_full_total",
      "Writes the in-process (memory) store refused for want of room: it is full of X-Request-IDs inside their retention",
      "counter",
    ),
    storeWarnings: new Gauge(
      "xs2a_store_warnings",
      "What makes the store refuse writes or may make it forget X-Request-IDs now (a full memory store, a Redis with appendonly no or an evicting maxmemory-policy, per node); 0: none",
    ),
    storeRoundTrips: new Gauge(
      "xs2a_store_round_trips_total",
      "Requests sent to the shared-state store",
      "counter",
    ),
    storeFailOpen: new Gauge(
      "xs2a_store_fail_open_total",
      "Requests let through while the store was unavailable",
      "counter",
    ),
    tppRefusals: new Counter(
      "xs2a_tpp_refusals_total",
      "Requests a check refused, by TPP (none: before the TPP was identified) and check",
    ),
    shadowDifferences: new Counter(
      "xs2a_shadow_differences_total",
      "Requests the shadow policy decided otherwise, by operation, check and both outcomes (pass or refuse)",
    ),
  };
  return {
    ...metrics,
    /**
     * Every worker's snapshot, this one's included, where the process has several (set by
     * `serve.ts` under `deno serve --parallel`); unset: this worker's only.
     */
    workers: undefined as undefined | (() => Promise<MetricsSnapshot[]>),
    /** Every metric as plain data. */
    snapshot(): MetricsSnapshot {
      return Object.values(metrics).map((m) => m.snapshot());
    },
    /** The Prometheus text exposition of every metric (this worker's). */
    render(): string {
      return renderSnapshot(this.snapshot());
    },
  };
}

/** The gateway's metrics. */
export type Metrics = ReturnType<typeof createMetrics>;
