/** Path prefix of RFC 9728 protected-resource metadata. */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/**
 * The RFC 9728 protected-resource metadata document. `scopes_supported` and `resource_documentation`
 * are present only when given (the registry service omits scopes; the proxy passes its `--oidc-scopes`).
 */
export function protectedResourceMetadata(p: {
  resource: string;
  authorizationServers: string[];
  scopes?: string[];
  resourceDocumentation?: string;
}): object {
  const doc: Record<string, unknown> = {
    resource: p.resource,
    authorization_servers: p.authorizationServers,
    bearer_methods_supported: ['header'],
  };
  if (p.scopes !== undefined) doc.scopes_supported = p.scopes;
  if (p.resourceDocumentation !== undefined && p.resourceDocumentation !== '') doc.resource_documentation = p.resourceDocumentation;
  return doc;
}
