/** OAuth client authentication toward token endpoints (remote login, token exchange). */
import type * as oidc from 'openid-client';

/**
 * `client_secret_basic` with the id and secret form-encoded as Go's `url.QueryEscape` does (RFC 6749
 * §2.3.1; unreserved characters stay as they are). openid-client also escapes `-`, `.`, `_` and `~`, which
 * authorization servers that do not decode the header (the MCP conformance suite's among them) refuse.
 */
export function clientSecretBasic(clientSecret: string): oidc.ClientAuth {
  return (_as, client, _body, headers) => {
    const encode = (v: string): string => encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%20/g, '+');
    headers.set('authorization', `Basic ${Buffer.from(`${encode(client.client_id)}:${encode(clientSecret)}`).toString('base64')}`);
  };
}
