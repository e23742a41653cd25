/**
 * The authenticator the proxy and the registry service share: extracts the bearer token, answers from the
 * cache of verified tokens, else tries each provider in order (the first that accepts wins).
 */
import type { Logger } from '../logging.js';
import { bearerCandidate, checkTokenSyntax } from './bearer.js';
import { AuthError, invalidToken } from './errors.js';
import type { Identity } from './identity.js';
import { OidcProvider, type AuthProviderConfig } from './provider.js';
import { TokenCache } from './token-cache.js';

export interface Authenticator {
  /** Validates the Authorization header value(s) of a request; resolves the Identity or throws AuthError. */
  authenticate(authorization: string | string[] | undefined): Promise<Identity>;
  close(): Promise<void>;
}

export interface AuthenticatorOptions {
  logger?: Logger;
  /** Verified tokens kept in memory (default 10 000; 0 disables the cache). */
  cacheSize?: number;
  /** Least time between JWKS refetches caused by an unknown `kid` (default 30 s). */
  jwksMinRefreshMs?: number;
  /** Timeout of each request to an identity provider (default 10 s). */
  timeoutMs?: number;
}

export function createAuthenticator(providers: AuthProviderConfig[], options: AuthenticatorOptions = {}): Authenticator {
  if (providers.length === 0) throw new Error('createAuthenticator needs at least one provider');
  const validators = providers.map((p) => new OidcProvider(p, { logger: options.logger, jwksMinRefreshMs: options.jwksMinRefreshMs, timeoutMs: options.timeoutMs }));
  for (const p of providers) {
    if (!p.audience) options.logger?.warn({ provider: p.name || p.issuer }, 'auth provider has no audience: tokens of this issuer for any audience are accepted');
  }
  const cache = new TokenCache(options.cacheSize ?? 10_000);
  const log = options.logger;
  const inflight = new Map<string, Promise<Identity>>();

  return {
    async authenticate(authorization) {
      const token = bearerCandidate(authorization);
      // Hash the header value as received ("Bearer " + token, checked just above): hashing the token
      // slice would first copy it, which costs more than the 7 extra bytes.
      const key = TokenCache.key(Array.isArray(authorization) ? authorization[0]! : authorization!);
      const cached = cache.get(key, Date.now());
      if (cached !== undefined) return cached;
      checkTokenSyntax(token);
      // Concurrent requests with the same new token share one validation (one introspection call).
      let pending = inflight.get(key);
      if (pending === undefined) {
        pending = validate(token, key).finally(() => inflight.delete(key));
        inflight.set(key, pending);
      }
      return pending;
    },
    async close() {
      await Promise.all(validators.map((v) => v.close()));
    },
  };

  async function validate(token: string, key: string): Promise<Identity> {
    let first: AuthError | undefined;
    for (const v of validators) {
      try {
        const { identity, cacheUntil } = await v.validate(token);
        // The cached identity is shared by every request with this token: freeze the claims object so
        // no stage can add or replace a claim for the next request (one level: a deep freeze costs
        // more than the rest of the cache path; nested values are read-only by convention).
        Object.freeze(identity.claims);
        cache.set(key, identity, cacheUntil);
        log?.debug({ provider: v.name, sub: identity.subject }, 'token accepted');
        return identity;
      } catch (err) {
        const e = err instanceof AuthError ? err : invalidToken('token validation failed');
        if (!(err instanceof AuthError)) log?.warn({ provider: v.name, err: (err as Error).message }, 'token validation error');
        log?.debug({ provider: v.name, reason: e.description }, 'token rejected by provider');
        first ??= e;
      }
    }
    // With one provider its reason is the useful answer; with several, no provider's reason is "the" reason.
    throw validators.length === 1 ? first! : invalidToken('token validation failed');
  }
}
