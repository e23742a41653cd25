/**
 * RFC 7591 dynamic client registration with ToolHive's exact request body (spec §7.2 step 5).
 */
import { ErrorCodes, ThvError } from '../errors.js';
import type { AuthServerMetadata } from './discovery.js';
import { describeFetchError, readJsonCapped, type FetchLike } from './http.js';

export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
  client_secret_expires_at?: number;
  registration_access_token?: string;
  registration_client_uri?: string;
  token_endpoint_auth_method?: string;
  /** The redirect URI the client was registered with (its port must be used again). */
  redirect_uri: string;
}

export function redirectUriFor(port: number): string {
  return `http://localhost:${port}/callback`;
}

export async function registerClient(
  metadata: AuthServerMetadata,
  scopes: string[],
  port: number,
  fetchImpl: FetchLike = fetch,
  timeoutMs = 10_000,
): Promise<RegisteredClient> {
  const endpoint = metadata.registration_endpoint ?? `${metadata.issuer.replace(/\/+$/, '')}/register`;
  // A public client (no secret) is only safe with PKCE S256.
  const methods = metadata.code_challenge_methods_supported;
  if (methods !== undefined && !methods.includes('S256')) {
    throw new ThvError(ErrorCodes.RemoteAuthFailed, 'the authorization server does not support PKCE S256, which dynamic registration of a public client needs', {
      hint: 'register a client yourself and pass --remote-auth-client-id',
    });
  }
  const redirectUri = redirectUriFor(port);
  const body = {
    redirect_uris: [redirectUri],
    client_name: 'ToolHive MCP Client',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
  };
  let res: Response;
  try {
    res = await fetchImpl(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new ThvError(ErrorCodes.RemoteAuthFailed, `dynamic client registration at ${endpoint} failed: ${describeFetchError(err)}`);
  }
  const doc = (await readJsonCapped(res).catch(() => undefined)) as Record<string, unknown> | undefined;
  if (res.status < 200 || res.status >= 300 || !doc || typeof doc.client_id !== 'string') {
    // The error code and description are the server's words about our request, not a secret.
    const why = doc && typeof doc.error === 'string' ? `: ${doc.error}${typeof doc.error_description === 'string' ? ` (${doc.error_description})` : ''}` : '';
    throw new ThvError(ErrorCodes.RemoteAuthFailed, `dynamic client registration at ${endpoint} failed with HTTP ${res.status}${why}`, {
      hint: 'register a client yourself and pass --remote-auth-client-id',
    });
  }
  return {
    client_id: doc.client_id,
    client_secret: typeof doc.client_secret === 'string' && doc.client_secret !== '' ? doc.client_secret : undefined,
    client_secret_expires_at: typeof doc.client_secret_expires_at === 'number' ? doc.client_secret_expires_at : undefined,
    registration_access_token: typeof doc.registration_access_token === 'string' ? doc.registration_access_token : undefined,
    registration_client_uri: typeof doc.registration_client_uri === 'string' ? doc.registration_client_uri : undefined,
    token_endpoint_auth_method: typeof doc.token_endpoint_auth_method === 'string' ? doc.token_endpoint_auth_method : undefined,
    redirect_uri: redirectUri,
  };
}
