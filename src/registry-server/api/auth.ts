import type { MiddlewareHandler } from 'hono';
import { createAuthenticator, type AuthProviderConfig } from '../../auth/index.js';
import type { Logger } from '../../logging.js';
import type { Caller } from '../claims.js';
import { ROLE_NAMES, type AuthConfig, type ProviderConfig, type RoleName, type RoleRules } from '../config.js';
import { makePublicPathMatcher } from './public-paths.js';
import { rawPathOf } from './params.js';

/**
 * Authentication and role resolution for the public server (spec §4.3-4.4). Token validation itself
 * belongs to the shared auth module (src/auth); this file only decides who must present a token,
 * shapes the 401, and turns claims into roles and the claim-gate caller.
 */
export interface AuthIdentity {
  subject: string;
  name?: string;
  email?: string;
  claims: Record<string, unknown>;
}
export interface Authenticator {
  authenticate(authorization: string | string[] | undefined): Promise<AuthIdentity>;
  close(): Promise<void>;
}

export type AuthVars = {
  caller: Caller;
  roles: RoleName[];
  identity: AuthIdentity | undefined;
  authenticated: boolean;
};

/** Maps our provider config onto the auth module's, reading nothing secret here. */
export function providerConfigs(providers: ProviderConfig[], insecureUrl: boolean): AuthProviderConfig[] {
  return providers.map((p) => ({
    name: p.name,
    issuer: p.issuerUrl,
    audience: p.audience,
    jwksUrl: p.jwksUrl,
    introspectionUrl: p.introspectionUrl,
    clientId: p.clientId,
    clientSecretFile: p.clientSecretFile,
    caBundle: p.caCertPath,
    authTokenFile: p.authTokenFile,
    allowPrivateIp: p.allowPrivateIP,
    insecureAllowHttp: insecureUrl,
  }));
}

export async function loadAuthenticator(auth: AuthConfig, insecureUrl: boolean, logger: Logger): Promise<Authenticator> {
  return createAuthenticator(providerConfigs(auth.oauth?.providers ?? [], insecureUrl), { logger });
}

/** `Bearer realm="…", error="…", error_description="…", resource_metadata="…"` with values sanitised. */
export function wwwAuthenticate(realm: string, resourceUrl: string, error: string, description: string): string {
  const q = (v: string) => `"${v.replace(/[\r\n]/g, '').replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  let h = `Bearer realm=${q(realm)}, error=${q(error)}, error_description=${q(description)}`;
  if (resourceUrl) h += `, resource_metadata=${q(`${resourceUrl.replace(/\/+$/, '')}/.well-known/oauth-protected-resource`)}`;
  return h;
}

function valuesOf(v: unknown): string[] | undefined {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  return undefined;
}

/** OR across maps, AND across keys, OR within values (spec §4.4). */
export function resolveRoles(rules: RoleRules, claims: Record<string, unknown>): RoleName[] {
  const matches = (m: Record<string, unknown>): boolean => {
    const keys = Object.keys(m);
    if (keys.length === 0) return false;
    return keys.every((k) => {
      const want = valuesOf(m[k]);
      const have = valuesOf(claims[k]);
      return !!want && want.length > 0 && !!have && want.some((w) => have.includes(w));
    });
  };
  return ROLE_NAMES.filter((r) => (rules[r] ?? []).some(matches));
}

export function authMiddleware(auth: AuthConfig, authenticator: Authenticator | undefined, logger: Logger): MiddlewareHandler<{ Variables: AuthVars }> {
  const isPublic = makePublicPathMatcher(auth.publicPaths);
  const realm = auth.oauth?.realm ?? 'mcp-registry';
  const resourceUrl = auth.oauth?.resourceUrl ?? '';
  return async (c, next) => {
    c.set('caller', { superAdmin: false });
    c.set('roles', []);
    c.set('identity', undefined);
    c.set('authenticated', false);
    if (auth.mode === 'anonymous' || isPublic(rawPathOf(c.req.url))) return next();
    const header = c.req.header('authorization');
    const deny = (error: string, description: string) => {
      c.header('WWW-Authenticate', wwwAuthenticate(realm, resourceUrl, error, description));
      return c.json({ error: description }, 401);
    };
    if (!header || !header.startsWith('Bearer ') || header.slice(7).trim() === '') return deny('invalid_request', 'missing or malformed authorization header');
    let id: AuthIdentity;
    try {
      id = await authenticator!.authenticate(header);
    } catch (err) {
      logger.debug({ reason: (err as { code?: string }).code ?? (err as Error).message }, 'token rejected');
      return deny('invalid_token', 'token validation failed');
    }
    c.set('identity', id);
    c.set('authenticated', true);
    if (auth.authz) {
      const roles = resolveRoles(auth.authz.roles, id.claims);
      c.set('roles', roles);
      c.set('caller', { claims: id.claims, superAdmin: roles.includes('superAdmin') });
    } else {
      c.set('roles', [...ROLE_NAMES]);
    }
    return next();
  };
}

/** 403 unless the caller holds `role` (or superAdmin). No authz block, or no token: pass (spec §4.4). */
export function requireRole(auth: AuthConfig, role: RoleName): MiddlewareHandler<{ Variables: AuthVars }> {
  return async (c, next) => {
    if (!auth.authz || !c.get('authenticated')) return next();
    const roles = c.get('roles');
    if (roles.includes(role) || roles.includes('superAdmin')) return next();
    return c.json({ error: 'forbidden: insufficient permissions' }, 403);
  };
}
