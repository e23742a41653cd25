/**
 * `WWW-Authenticate: Bearer …` (RFC 6750 §3) in ToolHive's parameter order: realm, resource_metadata,
 * scope, error, error_description; empty values are left out. Values are quoted strings: `\` and `"`
 * are escaped, CR/LF and other control characters removed so a value cannot split the header.
 */
export function wwwAuthenticateHeader(p: {
  realm: string;
  resourceMetadataUrl?: string;
  scope?: string;
  error?: string;
  errorDescription?: string;
}): string {
  const params: string[] = [];
  const add = (key: string, value: string | undefined): void => {
    if (value !== undefined && value !== '') params.push(`${key}="${quoteValue(value)}"`);
  };
  add('realm', p.realm);
  add('resource_metadata', p.resourceMetadataUrl);
  add('scope', p.scope);
  add('error', p.error);
  add('error_description', p.errorDescription);
  return params.length === 0 ? 'Bearer' : `Bearer ${params.join(', ')}`;
}

function quoteValue(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f]/g, '').replace(/[\\"]/g, (c) => `\\${c}`);
}

/**
 * The RFC 9728 §3.1 metadata URL for a resource: the well-known segment goes between the authority and
 * the resource's path (`https://h/v1/mcp` → `https://h/.well-known/oauth-protected-resource/v1/mcp`);
 * a bare `/` path adds nothing; query and fragment are dropped. Undefined for an unparsable URL.
 */
export function resourceMetadataUrl(resourceUrl: string): string | undefined {
  let u: URL;
  try {
    u = new URL(resourceUrl);
  } catch {
    return undefined;
  }
  const path = u.pathname === '/' ? '' : u.pathname;
  return `${u.protocol}//${u.host}/.well-known/oauth-protected-resource${path}`;
}
