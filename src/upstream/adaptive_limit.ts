/**
 * Adaptive concurrency limits: the number of requests a gateway instance lets reach the core at
 * once follows the core's latency, within `[min, max]`. Two algorithms of Netflix's
 * concurrency-limits library, kept to their arithmetic:
 *
 * - `gradient` (Gradient2Limit): a long-term average of the latency is the baseline; while the
 *   current latency stays within `tolerance` times the baseline the limit grows by `queueSize`
 *   (smoothed), and when it rises above, the limit shrinks by the ratio of the two (never by more
 *   than half a step, to ride out outliers).
 * - `aimd` (AIMDLimit): the limit grows by one while nothing is dropped and shrinks by `backoff`
 *   (0.9: by a tenth) when a request timed out, failed or was answered slower than `timeout`.
 *
 * Both are fed by a {@link SampledLimit} (WindowedLimit): samples are gathered for a `window`
 * (and at least 11 of them) and the algorithm sees the window's average latency, its highest
 * in-flight count and whether anything was dropped, once per window, like TCP reacting once per
 * round trip. Neither grows while the core is not used to half the limit (no evidence that more
 * would be served well). Two departures from WindowedLimit: dropped requests count towards the
 * window's samples (their latency only when nothing else was measured), so that a core that only
 * times out still closes windows; and for AIMD a drop ends its window at once (`dropsEndWindow`),
 * measured with the fast 503s of a core of capacity 6 under 30 clients (tests/middleware/
 * upstream_limits_test.ts): waiting out 100 ms windows, 319 requests were refused for 305 served
 * in 1.5 s; reacting at once, 3 for 271.
 *
 * Not Envoy's gradient controller: it re-measures its ideal latency (minRTT) by holding every
 * instance's concurrency to a few requests for a while, periodically and with jitter. In front of a
 * core shared by N gateway instances that pause throttles every TPP on the instance and measures
 * the latency the other instances cause; Gradient2's long-term average needs no pause.
 *
 * No clock is read here: samples carry their own start and duration, so tests drive the
 * arithmetic with plain numbers.
 *
 * @example
 * const limit = new SampledLimit(new Gradient2({ min: 2, max: 50, initial: 10 }), { windowMs: 1000 });
 * limit.sample({ start: 0, rtt: 40, inFlight: 9, dropped: false });
 * limit.limit; // the current limit, an integer in [2, 50]
 */

/** An algorithm that moves a concurrency limit from the core's answers. */
export interface LimitAlgorithm {
  /** The current limit: an integer within the algorithm's bounds. */
  readonly limit: number;
  /**
   * Takes one (window's) measurement: its latency in ms, the most requests in flight during it,
   * whether any request was dropped; returns the new limit.
   */
  update(rtt: number, inFlight: number, dropped: boolean): number;
}

/** Bounds of a limit. */
export interface LimitBounds {
  /** The lowest the limit goes. */
  min: number;
  /** The highest the limit goes. */
  max: number;
  /** Where the limit starts (default: `min`). */
  initial?: number;
}

function clamp(value: number, { min, max }: LimitBounds): number {
  return Math.max(min, Math.min(max, value));
}

function checkBounds(bounds: LimitBounds): void {
  if (!(bounds.min >= 1 && bounds.min <= bounds.max)) {
    throw new RangeError(
      `Limit bounds must satisfy 1 <= min <= max, got ${bounds.min}..${bounds.max}`,
    );
  }
}

/**
 * An exponential moving average over about `window` samples, whose first `warmup` samples are
 * averaged plainly (Netflix's ExpAvgMeasurement).
 */
export class ExpAverage {
  #value = 0;
  #sum = 0;
  #count = 0;
  constructor(readonly window: number, readonly warmup: number) {}

  get value(): number {
    return this.#value;
  }

  add(sample: number): number {
    if (this.#count < this.warmup) {
      this.#count++;
      this.#sum += sample;
      this.#value = this.#sum / this.#count;
    } else {
      const factor = 2 / (this.window + 1);
      this.#value = this.#value * (1 - factor) + sample * factor;
    }
    return this.#value;
  }

  /** Scales the average (the baseline decays faster after a long overload). */
  scale(by: number): void {
    this.#value *= by;
  }
}

/** Options of {@link Gradient2}. */
export interface Gradient2Options extends LimitBounds {
  /** How much slower than the baseline the core may answer before the limit shrinks (>= 1). */
  tolerance?: number;
  /** Share of each new estimate taken into the limit (0 to 1). */
  smoothing?: number;
  /** What the limit grows by per measurement while latency holds. */
  queueSize?: number;
  /** Measurements the baseline averages over. */
  longWindow?: number;
}

/**
 * Gradient2: `gradient = clamp(tolerance * baseline / latency, 0.5, 1)`,
 * `limit = (1 - smoothing) * limit + smoothing * (gradient * limit + queueSize)`, within bounds.
 */
export class Gradient2 implements LimitAlgorithm {
  readonly #bounds: LimitBounds;
  readonly #tolerance: number;
  readonly #smoothing: number;
  readonly #queueSize: number;
  readonly #baseline: ExpAverage;
  #estimate: number;

  constructor(options: Gradient2Options) {
    checkBounds(options);
    if ((options.tolerance ?? 1.5) < 1) throw new RangeError("Tolerance must be at least 1");
    this.#bounds = options;
    this.#tolerance = options.tolerance ?? 1.5;
    this.#smoothing = options.smoothing ?? 0.2;
    this.#queueSize = options.queueSize ?? 4;
    this.#baseline = new ExpAverage(options.longWindow ?? 600, 10);
    this.#estimate = clamp(options.initial ?? options.min, options);
  }

  get limit(): number {
    return Math.floor(this.#estimate);
  }

  /** The long-term average latency the current one is compared with, in ms. */
  get baseline(): number {
    return this.#baseline.value;
  }

  update(rtt: number, inFlight: number, _dropped: boolean): number {
    const baseline = this.#baseline.add(rtt);
    // Back from a long overload the baseline is far above the latency: let it fall faster than
    // its average would.
    if (baseline / rtt > 2) this.#baseline.scale(0.95);
    // Not used to half the limit: no evidence that a higher one would be served as well.
    if (inFlight < this.#estimate / 2) return this.limit;
    const gradient = Math.max(0.5, Math.min(1, this.#tolerance * baseline / rtt));
    const next = this.#estimate * gradient + this.#queueSize;
    this.#estimate = clamp(
      this.#estimate * (1 - this.#smoothing) + next * this.#smoothing,
      this.#bounds,
    );
    return this.limit;
  }
}

/** Options of {@link Aimd}. */
export interface AimdOptions extends LimitBounds {
  /** What the limit is multiplied by after a drop (0.5 to just under 1). */
  backoff?: number;
  /** A latency above this (ms) counts as a drop. */
  timeoutMs?: number;
}

/**
 * AIMD: `limit + 1` while used to at least half of it and nothing dropped,
 * `floor(limit * backoff)` after a drop or a latency above `timeout`, within bounds.
 */
export class Aimd implements LimitAlgorithm {
  readonly #bounds: LimitBounds;
  readonly #backoff: number;
  readonly #timeoutMs: number;
  #limit: number;

  constructor(options: AimdOptions) {
    checkBounds(options);
    const backoff = options.backoff ?? 0.9;
    if (!(backoff >= 0.5 && backoff < 1)) {
      throw new RangeError(`Backoff must be in [0.5, 1), got ${backoff}`);
    }
    this.#bounds = options;
    this.#backoff = backoff;
    this.#timeoutMs = options.timeoutMs ?? 5000;
    this.#limit = Math.floor(clamp(options.initial ?? options.min, options));
  }

  get limit(): number {
    return this.#limit;
  }

  update(rtt: number, inFlight: number, dropped: boolean): number {
    let next = this.#limit;
    if (dropped || rtt > this.#timeoutMs) next = Math.floor(next * this.#backoff);
    else if (inFlight * 2 >= next) next++;
    this.#limit = clamp(next, this.#bounds);
    return this.#limit;
  }
}

/** One request's measurement. */
export interface Sample {
  /** When the request was sent to the core, in ms of any clock. */
  start: number;
  /** How long the core took to answer, in ms. */
  rtt: number;
  /** Requests in flight to the core when it was sent, itself included. */
  inFlight: number;
  /** The core did not serve it: a timeout, a connection error or an answer that it is overloaded. */
  dropped: boolean;
}

/** Options of {@link SampledLimit}. */
export interface SampledLimitOptions {
  /** How long samples are gathered before the algorithm sees them, in ms. */
  windowMs: number;
  /** Samples a window needs, more than this, before it counts (Netflix: 10). */
  minSamples?: number;
  /** Latencies below this (ms) are ignored as not having reached the core. */
  minRttMs?: number;
  /**
   * A drop ends the window at once (AIMD: back off at the first sign of overload, as TCP does at
   * a loss), and drops of requests sent before the limit last moved are ignored (they were sent
   * under the old limit; TCP's recovery).
   */
  dropsEndWindow?: boolean;
}

/**
 * An algorithm fed once per sampling window with the window's average latency, its highest
 * in-flight count and whether any request in it was dropped (Netflix's WindowedLimit).
 */
export class SampledLimit {
  readonly algorithm: LimitAlgorithm;
  readonly #windowMs: number;
  readonly #minSamples: number;
  readonly #minRttMs: number;
  readonly #dropsEndWindow: boolean;
  #nextUpdate = -Infinity;
  #lastUpdate = -Infinity;
  #count = 0;
  #sum = 0;
  #drops = 0;
  #dropSum = 0;
  #maxInFlight = 0;
  /** Windows the algorithm has been fed. */
  windows = 0;

  constructor(algorithm: LimitAlgorithm, options: SampledLimitOptions) {
    this.algorithm = algorithm;
    this.#windowMs = options.windowMs;
    this.#minSamples = options.minSamples ?? 10;
    this.#minRttMs = options.minRttMs ?? 0.1;
    this.#dropsEndWindow = options.dropsEndWindow ?? false;
  }

  /** The current limit. */
  get limit(): number {
    return this.algorithm.limit;
  }

  /** Takes one request's measurement; returns the (possibly new) limit. */
  sample({ start, rtt, inFlight, dropped }: Sample): number {
    if (!dropped && rtt < this.#minRttMs) return this.limit;
    const immediate = dropped && this.#dropsEndWindow;
    if (immediate && start < this.#lastUpdate) return this.limit;
    this.#maxInFlight = Math.max(this.#maxInFlight, inFlight);
    if (dropped) {
      this.#drops++;
      this.#dropSum += rtt;
    } else {
      this.#count++;
      this.#sum += rtt;
    }
    const end = start + rtt;
    const ready = immediate ||
      (end > this.#nextUpdate && this.#count + this.#drops > this.#minSamples);
    if (!ready) return this.limit;
    const average = this.#count > 0 ? this.#sum / this.#count : this.#dropSum / this.#drops;
    this.algorithm.update(average, this.#maxInFlight, this.#drops > 0);
    this.windows++;
    this.#nextUpdate = end + this.#windowMs;
    this.#lastUpdate = end;
    this.#count =
      this.#sum =
      this.#drops =
      this.#dropSum =
      this.#maxInFlight =
        0;
    return this.limit;
  }
}
