/**
 * Builds the openid-client `Configuration` for a remote's authorization server: client id and secret,
 * and the client authentication method (none for public clients; for a secret, what the registration
 * said, else Basic unless the server only supports client_secret_post).
 */
import * as oidc from 'openid-client';
import type { AuthServerMetadata } from './discovery.js';
import { clientSecretBasic } from '../auth/client-auth.js';
import { isLoopbackUrl } from './http.js';

export interface ClientIdentity {
  clientId: string;
  clientSecret?: string;
  /** From the registration response, when there was one. */
  authMethod?: string;
}

export function clientConfiguration(metadata: AuthServerMetadata, client: ClientIdentity): oidc.Configuration {
  let auth: oidc.ClientAuth;
  if (!client.clientSecret) auth = oidc.None();
  else {
    const method = client.authMethod ?? (metadata.token_endpoint_auth_methods_supported?.includes('client_secret_basic') === false &&
      metadata.token_endpoint_auth_methods_supported.includes('client_secret_post') ? 'client_secret_post' : 'client_secret_basic');
    auth = method === 'client_secret_post' ? oidc.ClientSecretPost(client.clientSecret) : clientSecretBasic(client.clientSecret);
  }
  const config = new oidc.Configuration(metadata as oidc.ServerMetadata, client.clientId, client.clientSecret ? { client_secret: client.clientSecret } : undefined, auth);
  // Plain http is accepted for loopback authorization servers only (development and tests).
  const endpoints = [metadata.issuer, metadata.token_endpoint, metadata.authorization_endpoint].filter((u): u is string => typeof u === 'string');
  if (endpoints.some((u) => u.startsWith('http:')) && endpoints.every((u) => !u.startsWith('http:') || isLoopbackUrl(new URL(u)))) {
    oidc.allowInsecureRequests(config);
  }
  return config;
}

/** A token-endpoint error in a form safe to log and show: the OAuth error code, never a token. */
export function describeOAuthError(err: unknown): string {
  if (err instanceof oidc.ResponseBodyError) return `${err.error}${err.error_description ? ` (${err.error_description.slice(0, 200)})` : ''}`;
  if (err instanceof oidc.AuthorizationResponseError) return `${err.error}`;
  const e = err as { message?: string; cause?: { message?: string; code?: string } };
  const cause = e?.cause?.message ?? e?.cause?.code;
  return cause ? `${e.message ?? ''}: ${cause}` : (e?.message ?? String(err));
}
