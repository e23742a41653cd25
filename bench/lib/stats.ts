/** Latency recording and the closed-loop driver used for the in-process (stdio) measurements. */

/** Append-only latency store (milliseconds) with exact percentiles. */
export class Latencies {
  private values = new Float64Array(1 << 16);
  private n = 0;

  record(ms: number): void {
    if (this.n === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.n++] = ms;
  }

  get count(): number {
    return this.n;
  }

  summary(): LatencySummary {
    if (this.n === 0) return { p50: NaN, p99: NaN, mean: NaN, max: NaN };
    const sorted = this.values.slice(0, this.n).sort();
    let sum = 0;
    for (const v of sorted) sum += v;
    return {
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      mean: sum / this.n,
      max: sorted[this.n - 1] ?? NaN,
    };
  }
}

export interface LatencySummary {
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

function percentile(sorted: Float64Array, q: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] ?? NaN;
}

export interface LoopResult {
  /** Calls that completed successfully inside the measured window. */
  good: number;
  /** Calls that failed (rejected or returned false) inside the measured window. */
  errors: number;
  /** Length of the measured window in seconds. */
  seconds: number;
  latency: LatencySummary;
  /** Calls still outstanding when the drain deadline passed (should be 0). */
  stuck: number;
}

/**
 * Keeps `concurrency` calls in flight: each worker issues the next call as soon as its previous one
 * settles. Calls completing during the first `warmupMs` are discarded; those completing during the
 * following `durationMs` are counted. After the window, workers stop issuing and the in-flight calls
 * are given `drainMs` to settle.
 */
export async function closedLoop(opts: {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  drainMs: number;
  call: () => Promise<boolean>;
  /** Called as the measured window opens and closes (e.g. to sample CPU use). */
  onWindow?: (edge: 'start' | 'end') => void;
}): Promise<LoopResult> {
  let phase: 'warmup' | 'measure' | 'stop' = 'warmup';
  let measureStart = 0;
  let measureEnd = 0;
  let good = 0;
  let errors = 0;
  let inFlight = 0;
  const latencies = new Latencies();

  const timers: NodeJS.Timeout[] = [];
  const windowDone = new Promise<void>((resolve) => {
    timers.push(
      setTimeout(() => {
        phase = 'measure';
        opts.onWindow?.('start');
        measureStart = performance.now();
        timers.push(
          setTimeout(() => {
            phase = 'stop';
            measureEnd = performance.now();
            opts.onWindow?.('end');
            resolve();
          }, opts.durationMs),
        );
      }, opts.warmupMs),
    );
  });

  const worker = async (): Promise<void> => {
    while (phase !== 'stop') {
      const start = performance.now();
      let ok: boolean;
      inFlight++;
      try {
        ok = await opts.call();
      } catch {
        ok = false;
      }
      inFlight--;
      if (phase !== 'measure') continue;
      if (ok) {
        good++;
        latencies.record(performance.now() - start);
      } else {
        errors++;
      }
    }
  };

  const workers = Promise.all(Array.from({ length: opts.concurrency }, worker));
  await windowDone;
  let stuck = 0;
  const drained = await Promise.race([
    workers.then(() => true),
    new Promise<false>((resolve) => timers.push(setTimeout(() => resolve(false), opts.drainMs))),
  ]);
  if (!drained) stuck = inFlight;
  for (const t of timers) clearTimeout(t);
  return {
    good,
    errors,
    seconds: (measureEnd - measureStart) / 1000,
    latency: latencies.summary(),
    stuck,
  };
}
