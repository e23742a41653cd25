/**
 * Which authorization server protects the remote, and what it offers (spec §7.2 step 3): the configured
 * issuer, else the challenge's realm, else RFC 9728 protected-resource metadata, else the remote's origin.
 * Authorization-server metadata comes from OIDC discovery or RFC 8414.
 */
import { ErrorCodes, ThvError } from '../errors.js';
import type { Detection } from './detect.js';
import { describeFetchError, fetchSameHost, isSecureOrLoopback, readJsonCapped, type FetchLike } from './http.js';

/** The parts of RFC 8414 / OIDC discovery metadata thv uses. */
export interface AuthServerMetadata {
  issuer: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  registration_endpoint?: string;
  code_challenge_methods_supported?: string[];
  scopes_supported?: string[];
  client_id_metadata_document_supported?: boolean;
  token_endpoint_auth_methods_supported?: string[];
  [key: string]: unknown;
}

export interface DiscoveredServer {
  metadata: AuthServerMetadata;
  scopes: string[];
  /** The `resource` of the remote's RFC 9728 metadata, when discovery went through it. */
  resource?: string;
  /** No metadata anywhere: the MCP 2025-03-26 default endpoints on the remote's origin are a guess. */
  defaultEndpoints?: boolean;
}

export interface DiscoveryOptions {
  issuer?: string;
  scopes: string[];
  authorizeUrl?: string;
  tokenUrl?: string;
  fetch?: FetchLike;
  timeoutMs?: number;
}

const TIMEOUT_MS = 10_000;

/** Candidate metadata URLs for an issuer, in ToolHive's order. */
export function metadataUrls(issuer: string): string[] {
  const u = new URL(issuer);
  const path = u.pathname.replace(/\/+$/, '');
  const out = [`${u.origin}${path}/.well-known/openid-configuration`];
  if (path) out.push(`${u.origin}/.well-known/oauth-authorization-server${path}`);
  out.push(`${u.origin}/.well-known/oauth-authorization-server`);
  if (path) out.push(`${u.origin}/.well-known/openid-configuration${path}`);
  return out;
}

/** Authorization-server metadata for an issuer; undefined when no candidate answers with a valid document. */
export async function discoverAuthServer(issuer: string, fetchImpl: FetchLike = fetch, timeoutMs = TIMEOUT_MS): Promise<AuthServerMetadata | undefined> {
  for (const url of metadataUrls(issuer)) {
    try {
      const res = await fetchSameHost(url, { headers: { accept: 'application/json' } }, timeoutMs, fetchImpl);
      if (res.status !== 200) {
        await res.body?.cancel().catch(() => {});
        continue;
      }
      const doc = (await readJsonCapped(res)) as AuthServerMetadata;
      if (doc && typeof doc.issuer === 'string' && (doc.authorization_endpoint || doc.token_endpoint)) return doc;
    } catch {
      // try the next form
    }
  }
  return undefined;
}

/** RFC 9728 protected-resource metadata (must be https or loopback, 200 JSON, `resource` present). */
export async function fetchResourceMetadata(url: string, fetchImpl: FetchLike = fetch, timeoutMs = TIMEOUT_MS): Promise<{ resource: string; authorization_servers?: string[]; scopes_supported?: string[] }> {
  if (!isSecureOrLoopback(url)) throw new ThvError(ErrorCodes.RemoteAuthFailed, `resource metadata URL must use https: ${url}`);
  let res: Response;
  try {
    res = await fetchSameHost(url, { headers: { accept: 'application/json' } }, timeoutMs, fetchImpl);
  } catch (err) {
    if (err instanceof ThvError) throw err;
    throw new ThvError(ErrorCodes.RemoteAuthFailed, `cannot fetch the protected-resource metadata at ${url}: ${describeFetchError(err)}`);
  }
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    throw new ThvError(ErrorCodes.RemoteAuthFailed, `the protected-resource metadata at ${url} answered HTTP ${res.status}`);
  }
  const doc = (await readJsonCapped(res).catch(() => undefined)) as { resource?: unknown; authorization_servers?: unknown; scopes_supported?: unknown } | undefined;
  if (!doc || typeof doc.resource !== 'string' || doc.resource === '') {
    throw new ThvError(ErrorCodes.RemoteAuthFailed, `the protected-resource metadata at ${url} has no "resource"`);
  }
  return {
    resource: doc.resource,
    authorization_servers: Array.isArray(doc.authorization_servers) ? doc.authorization_servers.filter((s): s is string => typeof s === 'string') : undefined,
    scopes_supported: Array.isArray(doc.scopes_supported) ? doc.scopes_supported.filter((s): s is string => typeof s === 'string') : undefined,
  };
}

/**
 * RFC 9728 §3.3: the metadata must describe the resource the client asked for: same origin, and the
 * remote URL's path equal to or below the resource's path.
 */
export function resourceCovers(resource: string, remoteUrl: string): boolean {
  let r: URL;
  try {
    r = new URL(resource);
  } catch {
    return false;
  }
  const u = new URL(remoteUrl);
  if (r.origin !== u.origin) return false;
  const base = r.pathname.replace(/\/+$/, '');
  const path = u.pathname.replace(/\/+$/, '');
  return path === base || path.startsWith(`${base}/`);
}

/** Cleans a realm into an issuer when it is an https (or loopback) URL. */
function issuerFromRealm(realm: string | undefined): string | undefined {
  if (!realm || !isSecureOrLoopback(realm)) return undefined;
  const u = new URL(realm);
  const path = u.pathname.replace(/\/+$/, '').replace(/\/{2,}/g, '/');
  return `${u.origin}${path}`;
}

export async function discoverForRemote(remoteUrl: string, detection: Extract<Detection, { kind: 'oauth' }>, o: DiscoveryOptions): Promise<DiscoveredServer> {
  const f = o.fetch ?? fetch;
  const timeout = o.timeoutMs ?? TIMEOUT_MS;
  const explicit = (m: AuthServerMetadata): AuthServerMetadata => ({
    ...m,
    ...(o.authorizeUrl ? { authorization_endpoint: o.authorizeUrl } : {}),
    ...(o.tokenUrl ? { token_endpoint: o.tokenUrl } : {}),
  });
  const tried: string[] = [];
  const attempt = async (issuer: string): Promise<AuthServerMetadata | undefined> => {
    tried.push(issuer);
    const m = await discoverAuthServer(issuer, f, timeout);
    return m ? explicit(m) : undefined;
  };
  // Explicit endpoints need no discovery at all.
  if (o.authorizeUrl && o.tokenUrl) {
    const issuer = o.issuer ?? new URL(o.authorizeUrl).origin;
    return { metadata: { issuer, authorization_endpoint: o.authorizeUrl, token_endpoint: o.tokenUrl, code_challenge_methods_supported: ['S256'] }, scopes: o.scopes };
  }
  if (o.issuer) {
    const m = await attempt(o.issuer);
    if (m) return { metadata: m, scopes: o.scopes };
  }
  const fromRealm = issuerFromRealm(detection.realm);
  if (fromRealm) {
    const m = await attempt(fromRealm);
    if (m) return { metadata: m, scopes: o.scopes.length > 0 ? o.scopes : detection.scope ? detection.scope.split(' ') : [] };
  }
  if (detection.resourceMetadata) {
    const prm = await fetchResourceMetadata(detection.resourceMetadata, f, timeout);
    if (!resourceCovers(prm.resource, remoteUrl)) {
      throw new ThvError(ErrorCodes.RemoteAuthFailed, `the protected-resource metadata of ${remoteUrl} names another resource (${prm.resource}); refusing to send credentials for it`);
    }
    for (const as of prm.authorization_servers ?? []) {
      const m = await attempt(as);
      if (m) {
        const scopes = o.scopes.length > 0 ? o.scopes : detection.scope ? detection.scope.split(' ') : (prm.scopes_supported ?? []);
        return { metadata: m, scopes, resource: prm.resource };
      }
    }
  }
  const origin = new URL(remoteUrl).origin;
  const m = await attempt(origin);
  if (m) return { metadata: m, scopes: o.scopes.length > 0 ? o.scopes : detection.scope ? detection.scope.split(' ') : ['openid', 'profile'] };
  // MCP 2025-03-26: a server that publishes no metadata at all serves the default endpoints at its origin.
  if (!detection.realm && !detection.resourceMetadata && !o.issuer) {
    return {
      metadata: { issuer: origin, authorization_endpoint: `${origin}/authorize`, token_endpoint: `${origin}/token`, registration_endpoint: `${origin}/register` },
      scopes: o.scopes.length > 0 ? o.scopes : detection.scope ? detection.scope.split(' ') : [],
      defaultEndpoints: true,
    };
  }
  throw new ThvError(ErrorCodes.RemoteAuthFailed, `the remote asks for OAuth but no authorization server metadata was found (tried ${tried.join(', ')})`, {
    hint: 'pass --remote-auth-issuer, or --remote-auth-authorize-url and --remote-auth-token-url',
  });
}
