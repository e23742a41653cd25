/**
 * The restart policy of a workload whose server died (spec §1.13): up to 10 restarts, waiting 5 s, 10 s,
 * 20 s, 40 s, then 60 s between them; a run that lasted 30 s or more counts as stable and resets both the
 * counter and the delay. When the budget is spent the workload ends in `error`.
 * The THV_* variables below tune it (tests use them to keep the wait short); they are not user-facing.
 */
export interface RestartPolicy {
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  stableRunMs: number;
  /** How often the proxy checks that its server is still alive. */
  healthIntervalMs: number;
  /** How long a (re)started proxy may take to answer `initialize`. */
  readyTimeoutMs: number;
}

export const DEFAULT_RESTART_POLICY: Readonly<RestartPolicy> = {
  maxAttempts: 10,
  initialDelayMs: 5_000,
  maxDelayMs: 60_000,
  stableRunMs: 30_000,
  healthIntervalMs: 1_000,
  readyTimeoutMs: 120_000,
};

function positiveInt(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 ? n : fallback;
}

export function restartPolicyFromEnv(env: NodeJS.ProcessEnv = process.env): RestartPolicy {
  const d = DEFAULT_RESTART_POLICY;
  return {
    maxAttempts: positiveInt(env.THV_RESTART_MAX_ATTEMPTS, d.maxAttempts),
    initialDelayMs: positiveInt(env.THV_RESTART_BACKOFF_MS, d.initialDelayMs),
    maxDelayMs: positiveInt(env.THV_RESTART_MAX_BACKOFF_MS, d.maxDelayMs),
    stableRunMs: positiveInt(env.THV_RESTART_STABLE_MS, d.stableRunMs),
    healthIntervalMs: Math.max(50, positiveInt(env.THV_HEALTH_INTERVAL_MS, d.healthIntervalMs)),
    readyTimeoutMs: positiveInt(env.THV_READY_TIMEOUT_MS, d.readyTimeoutMs),
  };
}

/** Counts failures and says how long to wait before the next attempt, or that the budget is spent. */
export class RestartBudget {
  attempts = 0;
  private delay: number;

  constructor(private readonly policy: RestartPolicy) {
    this.delay = policy.initialDelayMs;
  }

  /** Records a failure after a run of `ranForMs`; returns the wait before retrying, or undefined when spent. */
  next(ranForMs: number): number | undefined {
    if (ranForMs >= this.policy.stableRunMs) {
      this.attempts = 0;
      this.delay = this.policy.initialDelayMs;
    }
    this.attempts += 1;
    if (this.attempts > this.policy.maxAttempts) return undefined;
    const wait = this.delay;
    this.delay = Math.min(this.delay * 2, this.policy.maxDelayMs);
    return wait;
  }
}
