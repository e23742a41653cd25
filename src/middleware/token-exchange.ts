/**
 * RFC 8693 token exchange (ToolHive's `tokenexchange` middleware, proxy-auth-authz §4): the caller's
 * bearer token is exchanged at `tokenUrl` for one the upstream accepts, which replaces `Authorization`
 * (or goes into a custom header). Runs after auth; without an identity or a bearer token the request
 * passes unchanged. Failure → 401 `Token exchange failed` (the token endpoint's answer is only logged,
 * by its OAuth error code).
 *
 * DIFF: ToolHive exchanges on every request; exchanged tokens are cached here until they expire (keyed
 * by a hash of the subject token), and concurrent requests with the same token share one exchange.
 */
import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import { clientSecretBasic } from '../auth/client-auth.js';
import type { Logger } from '../logging.js';
import { sendText } from '../transport/http-util.js';
import type { NamedMiddleware } from './types.js';

export const TOKEN_EXCHANGE_STAGE = 'tokenexchange';
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const TOKEN_TYPE_PREFIX = 'urn:ietf:params:oauth:token-type:';

export interface TokenExchangeOptions {
  tokenUrl: string;
  clientId?: string;
  clientSecret?: string;
  audience?: string;
  scopes?: string[];
  /** `access_token` (default), `id_token`, `jwt`, or a full URN. */
  subjectTokenType?: string;
  /** Set: strategy `custom` (this header gets the token); unset: `replace` Authorization. */
  headerName?: string;
  logger: Logger;
  /** Most cached exchanged tokens (oldest dropped first). */
  maxCached?: number;
}

export function normaliseTokenType(t: string | undefined): string {
  if (!t) return `${TOKEN_TYPE_PREFIX}access_token`;
  return t.startsWith('urn:') ? t : `${TOKEN_TYPE_PREFIX}${t}`;
}

interface Cached {
  token: string;
  expiresAt: number;
}

export function tokenExchange(o: TokenExchangeOptions): NamedMiddleware & { exchanges(): number } {
  const url = new URL(o.tokenUrl);
  // The token endpoint is all the "server metadata" an exchange needs.
  const server: oidc.ServerMetadata = { issuer: url.origin, token_endpoint: o.tokenUrl };
  // Basic client authentication only when both are set; never credentials in the body (as ToolHive).
  const auth: oidc.ClientAuth = o.clientId && o.clientSecret ? clientSecretBasic(o.clientSecret) : () => {};
  const config = new oidc.Configuration(server, o.clientId || 'thv', undefined, auth);
  if (url.protocol === 'http:') oidc.allowInsecureRequests(config);
  const subjectTokenType = normaliseTokenType(o.subjectTokenType);
  const cache = new Map<string, Cached>();
  const inflight = new Map<string, Promise<Cached>>();
  const maxCached = o.maxCached ?? 1000;
  let count = 0;

  const exchange = async (subject: string): Promise<Cached> => {
    count++;
    const params: Record<string, string> = {
      subject_token: subject,
      subject_token_type: subjectTokenType,
      requested_token_type: `${TOKEN_TYPE_PREFIX}access_token`,
      ...(o.audience ? { audience: o.audience } : {}),
      ...(o.scopes && o.scopes.length > 0 ? { scope: o.scopes.join(' ') } : {}),
    };
    const res = await oidc.genericGrantRequest(config, TOKEN_EXCHANGE_GRANT, params);
    if (typeof res.issued_token_type !== 'string' || res.issued_token_type === '') throw new Error('the response has no issued_token_type');
    const expiresIn = typeof res.expires_in === 'number' ? res.expires_in : Number(res.expires_in);
    // Cached until shortly before expiry (a fifth of the lifetime, at most 30 s); without a lifetime not at all.
    const expiresAt = Number.isFinite(expiresIn) && expiresIn > 0 ? Date.now() + (expiresIn - Math.min(30, expiresIn / 5)) * 1000 : 0;
    return { token: res.access_token, expiresAt };
  };

  const tokenFor = async (subject: string): Promise<string> => {
    const key = createHash('sha256').update(subject).digest('base64url');
    const hit = cache.get(key);
    if (hit && hit.expiresAt > Date.now()) return hit.token;
    if (hit) cache.delete(key);
    let p = inflight.get(key);
    if (!p) {
      p = exchange(subject).finally(() => inflight.delete(key));
      inflight.set(key, p);
    }
    const got = await p;
    if (got.expiresAt > Date.now()) {
      cache.set(key, got);
      if (cache.size > maxCached) cache.delete(cache.keys().next().value!);
    }
    return got.token;
  };

  return {
    name: TOKEN_EXCHANGE_STAGE,
    exchanges: () => count,
    async handle(ctx, next) {
      if (!ctx.identity) return next();
      const header = ctx.req.headers.authorization;
      const m = typeof header === 'string' ? /^Bearer[ \t]+(\S+)\s*$/i.exec(header) : null;
      if (!m) return next();
      let token: string;
      try {
        token = await tokenFor(m[1]!);
      } catch (err) {
        const why = err instanceof oidc.ResponseBodyError ? `${err.error} (HTTP ${err.status})` : (err as Error).message;
        o.logger.warn({ err: why, token_url: o.tokenUrl }, 'token exchange failed');
        return sendText(ctx.res, 401, 'Token exchange failed\n');
      }
      if (o.headerName) ctx.req.headers[o.headerName.toLowerCase()] = `Bearer ${token}`;
      else ctx.req.headers.authorization = `Bearer ${token}`;
      return next();
    },
  };
}
