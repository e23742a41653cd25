/**
 * Connects to a remote MCP server at proxy start (spec §7.2): static bearer token, else detection of
 * OAuth, discovery, a cached login (refresh token) or the interactive flow. Returns the outbound-header
 * hook the transparent proxy calls for every upstream request.
 */
import { readFileSync } from 'node:fs';
import { ErrorCodes, ThvError } from '../errors.js';
import type { Logger } from '../logging.js';
import type { RemoteUpstream } from '../transport/transparent.js';
import type { RegisteredClient } from './registration.js';
import { parseChallenge } from './challenge.js';
import { detectAuth, DETECTION_TIMEOUT_MS } from './detect.js';
import { describeFetchError, fetchSameHost } from './http.js';
import { discoverForRemote } from './discovery.js';
import { runAuthorizationCodeFlow } from './flow.js';
import { clientConfiguration, describeOAuthError, type ClientIdentity } from './oauth-client.js';
import type { RemoteSettings } from './settings.js';
import { loadCachedLogin, saveCachedLogin, type LoginStore } from './store.js';
import { OAuthTokenSource, StaticTokenSource, type TokenSource } from './token-source.js';
import * as oidc from 'openid-client';

export interface RemoteConnection {
  upstream: RemoteUpstream;
  close(): void;
}

export interface ConnectOptions {
  name: string;
  logger: Logger;
  /** Resolves `--remote-forward-headers-secret` names. */
  resolveSecret?: (name: string) => Promise<string>;
  /** Where refresh tokens and registered clients are kept between runs (absent: not kept). */
  store?: LoginStore;
  say?: (line: string) => void;
}

function readSecretFile(path: string, what: string): string {
  try {
    const v = readFileSync(path, 'utf8').trim();
    if (v === '') throw new Error('the file is empty');
    return v;
  } catch (err) {
    throw new ThvError(ErrorCodes.InvalidConfig, `cannot read the ${what} file ${path}: ${(err as Error).message}`);
  }
}

export async function connectRemote(s: RemoteSettings, o: ConnectOptions): Promise<RemoteConnection> {
  const headers: Record<string, string> = { ...s.forwardHeaders };
  for (const [header, secret] of Object.entries(s.forwardHeadersSecret)) {
    if (!o.resolveSecret) throw new ThvError(ErrorCodes.InvalidConfig, `no secrets provider to resolve ${secret} for header ${header}`);
    headers[header] = await o.resolveSecret(secret);
  }
  const { source, stepUpFor } = (await tokenSourceFor(s, o)) ?? {};
  const inject = source !== undefined && !s.tokenExchange;
  if (inject) await verifyAccepted(s.url, await source.token(), headers, source instanceof StaticTokenSource);
  const lower = Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v] as const);
  return {
    upstream: {
      url: new URL(s.url),
      outboundHeaders: async (h) => {
        for (const [k, v] of lower) h[k] = v;
        if (inject) h.authorization = `Bearer ${await source.token()}`;
      },
      onUnauthorized: () => o.logger.warn('the remote MCP server answered 401: its credentials were refused (status unauthenticated)'),
      stepUpFor,
    },
    close: () => source?.close(),
  };
}

interface Credentials {
  source: TokenSource;
  stepUpFor?: RemoteUpstream['stepUpFor'];
}

/**
 * Scope step-up (MCP authorization spec): a 403 `insufficient_scope` naming scopes not yet granted runs
 * one new authorization of the same client for the union, shared by concurrent requests. Scopes already
 * granted are never asked for again, which bounds the retries.
 */
function scopeStepUp(source: OAuthTokenSource, granted: string[], authorize: (scopes: string[]) => Promise<oidc.TokenEndpointResponse>, logger: Logger): NonNullable<RemoteUpstream['stepUpFor']> {
  let have = new Set(granted);
  let inflight: Promise<boolean> | undefined;
  return (wwwAuthenticate) => {
    const c = parseChallenge(wwwAuthenticate);
    if (c?.scheme !== 'bearer' || c.params.error !== 'insufficient_scope' || !c.params.scope) return undefined;
    const wanted = new Set([...have, ...c.params.scope.split(' ').filter(Boolean)]);
    if (wanted.size === have.size) return undefined;
    return () => {
      inflight ??= (async () => {
        logger.info({ scopes: [...wanted] }, 'the remote MCP server asks for more scopes; authorizing again');
        try {
          source.replace(await authorize([...wanted]));
          have = wanted;
          return true;
        } catch (err) {
          logger.warn({ err: (err as Error).message }, 'the scope step-up failed; the remote keeps refusing the request');
          return false;
        } finally {
          inflight = undefined;
        }
      })();
      return inflight;
    };
  };
}

async function tokenSourceFor(s: RemoteSettings, o: ConnectOptions): Promise<Credentials | undefined> {
  const a = s.auth;
  const bearer = a.bearerToken ?? (a.bearerTokenFile ? readSecretFile(a.bearerTokenFile, 'bearer token') : undefined);
  if (bearer !== undefined) return { source: new StaticTokenSource(bearer) };
  // DIFF: with token exchange, the caller's exchanged token is the credential; ToolHive still runs the
  // interactive login here although `thv run` never injects its result.
  if (s.tokenExchange) {
    o.logger.info('token exchange supplies the credentials for the remote; no login toward it');
    return undefined;
  }

  const detection = await detectAuth(s.url);
  if (detection.kind === 'none') {
    o.logger.info('the remote MCP server asks for no authentication');
    return undefined;
  }
  o.logger.info({ resource_metadata: detection.resourceMetadata, realm: detection.realm }, 'the remote MCP server asks for OAuth');
  const discovered = await discoverForRemote(s.url, detection, { issuer: a.issuer, scopes: a.scopes, authorizeUrl: a.authorizeUrl, tokenUrl: a.tokenUrl });
  o.logger.info({ issuer: discovered.metadata.issuer, scopes: discovered.scopes }, 'found the authorization server of the remote');
  // RFC 8707: the MCP authorization spec has clients name the resource in every authorization and token
  // request; the remote's own metadata says what it is. (ToolHive sends it only when configured.)
  const resource = a.resource ?? discovered.resource;

  const secret = a.clientSecret ?? (a.clientSecretFile ? readSecretFile(a.clientSecretFile, 'client secret') : undefined);
  const configured: ClientIdentity | undefined = a.clientId ? { clientId: a.clientId, clientSecret: secret } : undefined;

  const login = (scopes: string[], client: ClientIdentity | undefined, registered: RegisteredClient | undefined) => runAuthorizationCodeFlow({
    metadata: discovered.metadata,
    scopes,
    client,
    registered,
    callbackPort: a.callbackPort,
    skipBrowser: a.skipBrowser,
    timeoutMs: a.timeoutMs,
    resource,
    scopeParamName: a.scopeParamName,
    extraParams: a.oauthParams,
    logger: o.logger,
    say: o.say,
  });
  /** A scope step-up: a new login of the same client, its refresh token kept like the first one's. */
  const reauthorize = (client: ClientIdentity | undefined, registered: RegisteredClient | undefined, persist: (rt: string) => Promise<void>) =>
    async (scopes: string[]): Promise<oidc.TokenEndpointResponse> => {
      const r = await login(scopes, client, registered);
      if (r.tokens.refresh_token) await persist(r.tokens.refresh_token);
      return r.tokens;
    };

  // A login kept from an earlier run: one refresh proves it still works.
  const cached = o.store ? await loadCachedLogin(o.store, o.name, o.logger) : undefined;
  if (cached && cached.issuer === discovered.metadata.issuer) {
    const client = configured ?? (cached.client ? { clientId: cached.client.client_id, clientSecret: cached.client.client_secret, authMethod: cached.client.token_endpoint_auth_method } : undefined);
    if (client) {
      const config = clientConfiguration(discovered.metadata, client);
      try {
        const tokens = await oidc.refreshTokenGrant(config, cached.refreshToken, resource ? { resource } : undefined);
        o.logger.info('reused the stored login for the remote (no new authorization needed)');
        const refreshToken = tokens.refresh_token ?? cached.refreshToken;
        const persist = (rt: string) => saveCachedLogin(o.store!, o.name, { ...cached, refreshToken: rt }, o.logger);
        if (refreshToken !== cached.refreshToken) await persist(refreshToken);
        const source = new OAuthTokenSource({ config, tokens: { access_token: tokens.access_token, token_type: tokens.token_type, expires_in: tokens.expires_in, refresh_token: refreshToken }, resource, logger: o.logger, onRefreshToken: persist });
        return { source, stepUpFor: scopeStepUp(source, discovered.scopes, reauthorize(client, cached.client, persist), o.logger) };
      } catch (err) {
        o.logger.warn({ err: describeOAuthError(err) }, 'the stored login for the remote no longer works; starting a new authorization');
      }
    }
  }

  const registered = !configured && cached?.client && cached.issuer === discovered.metadata.issuer ? cached.client : undefined;
  let result;
  try {
    result = await login(discovered.scopes, configured, registered);
  } catch (err) {
    // The default endpoints were only a guess (ToolHive does not make it): say what the remote may want instead.
    if (!discovered.defaultEndpoints || !(err instanceof ThvError)) throw err;
    throw new ThvError(ErrorCodes.RemoteAuthFailed, `the remote asks for a bearer token and publishes no OAuth metadata; its default OAuth endpoints did not work either (${err.message})`, {
      hint: 'pass --remote-auth-bearer-token (or TOOLHIVE_REMOTE_AUTH_BEARER_TOKEN), or --remote-auth-issuer',
    });
  }
  o.logger.info('authenticated to the remote MCP server');
  const kept = { issuer: discovered.metadata.issuer, client: result.registered, refreshToken: result.tokens.refresh_token ?? '' };
  const persist = async (rt: string): Promise<void> => {
    if (o.store) await saveCachedLogin(o.store, o.name, { ...kept, refreshToken: rt }, o.logger);
  };
  if (result.tokens.refresh_token) await persist(result.tokens.refresh_token);
  const source = new OAuthTokenSource({ config: result.config, tokens: result.tokens, resource, logger: o.logger, onRefreshToken: persist });
  return { source, stepUpFor: scopeStepUp(source, discovered.scopes, reauthorize(configured, result.registered, persist), o.logger) };
}

/**
 * One probe with the credentials (the detection request, whose empty params no server accepts as a
 * session): a remote that still answers 401 would refuse every client request, so `thv run` stops here
 * with a clear message instead of serving a proxy that can only fail. (ToolHive starts and marks the
 * workload `unauthenticated` on the first 401.)
 */
async function verifyAccepted(url: string, token: string, headers: Record<string, string>, isStatic: boolean): Promise<void> {
  let res: Response;
  try {
    res = await fetchSameHost(url, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    }, DETECTION_TIMEOUT_MS);
  } catch (err) {
    if (err instanceof ThvError) throw err;
    throw new ThvError(ErrorCodes.RemoteUnreachable, `the remote MCP server ${url} cannot be reached: ${describeFetchError(err)}`);
  }
  await res.body?.cancel().catch(() => {});
  if (res.status !== 401) return;
  const challenge = parseChallenge(res.headers.get('www-authenticate'));
  const why = challenge?.params.error ? ` (${challenge.params.error})` : '';
  throw new ThvError(ErrorCodes.RemoteAuthFailed, `the remote MCP server refused the ${isStatic ? 'configured bearer token' : 'access token it asked for'} with HTTP 401${why}`, {
    hint: isStatic ? 'check --remote-auth-bearer-token / --remote-auth-bearer-token-file' : 'check the scopes (--remote-auth-scopes) and the resource (--remote-auth-resource) the remote needs',
  });
}
