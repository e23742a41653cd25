/**
 * Access tokens toward the remote. `StaticTokenSource` holds a configured bearer token;
 * `OAuthTokenSource` holds the result of the OAuth flow and refreshes it in the background before it
 * expires (spec §7.2 step 7), retrying transient failures with exponential backoff. While no valid token
 * is available, `token()` throws `TokenUnavailableError` (the proxy answers 503 + Retry-After).
 */
import * as oidc from 'openid-client';
import type { Logger } from '../logging.js';
import { describeOAuthError } from './oauth-client.js';

export interface TokenSource {
  token(): Promise<string>;
  close(): void;
}

export class TokenUnavailableError extends Error {}

export class StaticTokenSource implements TokenSource {
  constructor(private readonly value: string) {}
  async token(): Promise<string> {
    return this.value;
  }
  close(): void {}
}

export interface OAuthTokenSourceOptions {
  config: oidc.Configuration;
  tokens: oidc.TokenEndpointResponse;
  resource?: string;
  logger: Logger;
  /** Called with every new refresh token (rotation), to persist it. */
  onRefreshToken?: (refreshToken: string) => Promise<void> | void;
  /** Backoff schedule (tests shorten it through TOOLHIVE_TOKEN_REFRESH_* variables). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  maxTries?: number;
}

/** How long before expiry a refresh starts: a fifth of the lifetime, at most a minute. */
function refreshLead(lifetimeMs: number): number {
  return Math.min(60_000, Math.max(0, lifetimeMs / 5));
}

export class OAuthTokenSource implements TokenSource {
  private accessToken: string;
  private refreshToken: string | undefined;
  private expiresAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inflight: Promise<void> | undefined;
  private closed = false;
  private failed: string | undefined;

  constructor(private readonly o: OAuthTokenSourceOptions) {
    this.accessToken = o.tokens.access_token;
    this.refreshToken = o.tokens.refresh_token;
    this.expiresAt = expiry(o.tokens);
    this.schedule();
  }

  /** Credentials from a new authorization of the same client (a scope step-up) replace the current ones. */
  replace(tokens: oidc.TokenEndpointResponse): void {
    this.accessToken = tokens.access_token;
    if (tokens.refresh_token) this.refreshToken = tokens.refresh_token;
    this.expiresAt = expiry(tokens);
    this.failed = undefined;
    this.schedule();
  }

  /** Whether a refresh token exists (without one the session ends when the access token expires). */
  get canRefresh(): boolean {
    return this.refreshToken !== undefined;
  }

  async token(): Promise<string> {
    if (this.expiresAt === undefined || Date.now() < this.expiresAt - 1000) return this.accessToken;
    if (!this.refreshToken) throw new TokenUnavailableError(this.failed ?? 'the access token expired and no refresh token was issued');
    await this.refreshOnce();
    if (this.expiresAt !== undefined && Date.now() >= this.expiresAt) throw new TokenUnavailableError(this.failed ?? 'token refresh failed');
    return this.accessToken;
  }

  /** One refresh, shared by concurrent callers. */
  refreshOnce(): Promise<void> {
    this.inflight ??= this.refresh().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async refresh(): Promise<void> {
    if (!this.refreshToken) return;
    const initial = this.o.initialBackoffMs ?? envMs('TOOLHIVE_TOKEN_REFRESH_INITIAL_INTERVAL', 10_000);
    const max = this.o.maxBackoffMs ?? envMs('TOOLHIVE_TOKEN_REFRESH_MAX_INTERVAL', 120_000);
    const tries = this.o.maxTries ?? 5;
    let wait = initial;
    for (let attempt = 1; attempt <= tries && !this.closed; attempt++) {
      try {
        const res = await oidc.refreshTokenGrant(this.o.config, this.refreshToken, this.o.resource ? { resource: this.o.resource } : undefined);
        this.accessToken = res.access_token;
        this.expiresAt = expiry(res);
        this.failed = undefined;
        if (res.refresh_token && res.refresh_token !== this.refreshToken) {
          this.refreshToken = res.refresh_token;
          await this.o.onRefreshToken?.(res.refresh_token);
        }
        this.o.logger.debug({ expires_in: res.expires_in }, 'refreshed the access token for the remote');
        this.schedule();
        return;
      } catch (err) {
        const why = describeOAuthError(err);
        this.failed = `token refresh failed: ${why}`;
        // invalid_grant and friends are permanent: the user must log in again.
        if (err instanceof oidc.ResponseBodyError && ['invalid_grant', 'invalid_client', 'unauthorized_client'].includes(err.error)) {
          this.o.logger.error({ err: why }, 'the remote authorization server refused the refresh token; restart the workload to log in again');
          return;
        }
        this.o.logger.warn({ err: why, attempt }, 'token refresh failed; retrying');
        if (attempt < tries) await new Promise((r) => setTimeout(r, wait).unref());
        wait = Math.min(max, wait * 2);
      }
    }
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.closed || this.expiresAt === undefined || !this.refreshToken) return;
    const lifetime = this.expiresAt - Date.now();
    const at = Math.max(0, lifetime - refreshLead(lifetime));
    this.timer = setTimeout(() => void this.refreshOnce(), at);
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }
}

function expiry(t: oidc.TokenEndpointResponse): number | undefined {
  return typeof t.expires_in === 'number' && t.expires_in > 0 ? Date.now() + t.expires_in * 1000 : undefined;
}

function envMs(name: string, fallback: number): number {
  const v = process.env[name];
  if (!v) return fallback;
  const n = Number(v.replace(/ms$/, ''));
  return Number.isFinite(n) && n > 0 ? n : fallback;
}
