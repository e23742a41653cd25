/**
 * A JWKS held in memory, keyed by `kid`. Fetched on first use; refetched when it is older than its
 * Cache-Control max-age (clamped), and when a token names a `kid` we do not know — at most once per
 * `minRefreshMs`, so a stream of tokens with made-up kids cannot make us hammer the identity provider.
 * Concurrent callers share one fetch.
 */
import { importJWK, type JWK } from 'jose';

export type VerifyKey = Exclude<Awaited<ReturnType<typeof importJWK>>, Uint8Array>;

export interface FetchedJwks {
  keys: JWK[];
  /** From Cache-Control max-age, when the server sent one. */
  maxAgeMs?: number;
}

export interface JwksCacheOptions {
  /** Least time between two fetches caused by unknown kids (default 30 s). */
  minRefreshMs?: number;
  /** Lifetime when the server sends no max-age (default 10 min). */
  defaultMaxAgeMs?: number;
  now?: () => number;
}

const MIN_MAX_AGE_MS = 60_000;
const MAX_MAX_AGE_MS = 24 * 3600_000;

export class JwksCache {
  private jwks = new Map<string, JWK>();
  private imported = new Map<string, Promise<VerifyKey>>();
  /** Keys already imported, for the synchronous fast path (no promise per token). */
  private ready = new Map<string, VerifyKey>();
  private fetchedAt = -Infinity;
  private expiresAt = -Infinity;
  private inflight: Promise<void> | undefined;
  /** After a failed fetch with no keys at hand, callers get the same error for a second instead of a new fetch. */
  private failedUntil = -Infinity;
  private lastError: unknown;
  private readonly minRefreshMs: number;
  private readonly defaultMaxAgeMs: number;
  private readonly now: () => number;

  constructor(private readonly load: () => Promise<FetchedJwks>, options: JwksCacheOptions = {}) {
    this.minRefreshMs = options.minRefreshMs ?? 30_000;
    this.defaultMaxAgeMs = options.defaultMaxAgeMs ?? 600_000;
    this.now = options.now ?? Date.now;
  }

  /** The key for `kid` and `alg` when it is imported and the JWKS is fresh; otherwise use getKey. */
  peek(kid: string, alg: string): VerifyKey | undefined {
    return this.now() < this.expiresAt ? this.ready.get(`${kid}\u0000${alg}`) : undefined;
  }

  /** The key for `kid`, usable with `alg`; undefined when the JWKS has no such key even after a refresh. */
  async getKey(kid: string, alg: string): Promise<VerifyKey | undefined> {
    const t = this.now();
    if (this.jwks.size === 0 && t < this.failedUntil) throw this.lastError;
    if (t >= this.expiresAt) await this.refresh();
    else if (!this.jwks.has(kid) && t - this.fetchedAt >= this.minRefreshMs) await this.refresh();
    const jwk = this.jwks.get(kid);
    if (jwk === undefined) return undefined;
    const cacheKey = `${kid}\u0000${alg}`;
    let key = this.imported.get(cacheKey);
    if (key === undefined) {
      key = importJWK(jwk, alg) as Promise<VerifyKey>;
      this.imported.set(cacheKey, key);
      const imported = this.imported;
      const ready = this.ready;
      key.then(
        (k) => {
          if (this.imported === imported) ready.set(cacheKey, k);
        },
        () => imported.delete(cacheKey),
      );
    }
    return key;
  }

  private refresh(): Promise<void> {
    this.inflight ??= (async () => {
      try {
        const fetched = await this.load();
        const next = new Map<string, JWK>();
        for (const k of fetched.keys) {
          // kid is mandatory for token verification; keys without one cannot be selected.
          if (typeof k.kid === 'string' && k.kid !== '' && !next.has(k.kid)) next.set(k.kid, k);
        }
        this.jwks = next;
        this.imported = new Map();
        this.ready = new Map();
        const t = this.now();
        this.fetchedAt = t;
        const maxAge = fetched.maxAgeMs ?? this.defaultMaxAgeMs;
        this.expiresAt = t + Math.min(Math.max(maxAge, MIN_MAX_AGE_MS), MAX_MAX_AGE_MS);
      } catch (err) {
        // Count a failed fetch against the refresh budget too, but keep any keys we already had
        // (and retry them no sooner than an unknown kid would).
        const t = this.now();
        this.fetchedAt = t;
        if (this.jwks.size > 0) {
          this.expiresAt = t + this.minRefreshMs;
          return;
        }
        this.failedUntil = t + 1000;
        this.lastError = err;
        throw err;
      } finally {
        this.inflight = undefined;
      }
    })();
    return this.inflight;
  }
}

/** max-age of a Cache-Control header in ms, if present. */
export function maxAgeMs(cacheControl: string | null): number | undefined {
  if (cacheControl === null) return undefined;
  const m = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cacheControl);
  return m ? Number(m[1]) * 1000 : undefined;
}
