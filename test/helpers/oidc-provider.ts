/**
 * A real OpenID provider (`oidc-provider`) for tests, over TLS on 127.0.0.1 with a CA made at runtime
 * (openssl CLI). It issues, through the client_credentials grant:
 *   - JWT access tokens for `audience` (RFC 8707 resource indicator), signed RS256 (or ES256),
 *   - opaque access tokens with the same audience, which only introspection can validate,
 * and serves discovery, JWKS and RFC 7662 introspection (client `introspection.clientId/Secret`).
 *
 * Each "user" is a confidential client whose id is the subject; extra claims (name, email, groups, …)
 * are attached to its tokens (JWT and introspection response alike). `sign()` mints arbitrary JWTs
 * with the provider's own signing key, for hostile and edge cases.
 *
 *   const idp = await startTestIdp();            // t.after(() => idp.close())
 *   const token = await idp.jwt('alice');
 *   createAuthenticator([{ issuer: idp.issuer, audience: idp.audience, caBundle: idp.caFile, allowPrivateIp: true }])
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import Provider, { errors as oidcErrors } from 'oidc-provider';
import { Agent, fetch } from 'undici';

// ---------------------------------------------------------------------------------------------------
// Test CA

export interface TestCa {
  dir: string;
  /** PEM file of the CA certificate (what `--thv-ca-bundle` / `caBundle` points at). */
  caFile: string;
  caPem: string;
  /** A server certificate for 127.0.0.1 / localhost (plus `names`), signed by this CA. */
  issue(name: string, names?: string[]): { key: string; cert: string; keyFile: string; certFile: string };
  /** Removes the directory (keys included). */
  cleanup(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A throwaway CA in a fresh temp dir. EC P-256 keeps key generation fast. */
export function createTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'thv-test-ca-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    ['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=thv test CA',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
    dir,
  );
  const caFile = join(dir, 'ca.pem');
  let serial = 0;
  return {
    dir,
    caFile,
    caPem: readFileSync(caFile, 'utf8'),
    issue(name, names = []) {
      const base = `${name}-${++serial}`;
      const san = ['IP:127.0.0.1', 'DNS:localhost', ...names.map((n) => (/^[\d.]+$/.test(n) ? `IP:${n}` : `DNS:${n}`))].join(',');
      writeFileSync(join(dir, `${base}.ext`), `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
      openssl(['req', ...ec, '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${name}`], dir);
      openssl(['x509', '-req', '-in', `${base}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', String(1000 + serial),
        '-out', `${base}.pem`, '-days', '2', '-extfile', `${base}.ext`], dir);
      const keyFile = join(dir, `${base}.key`);
      const certFile = join(dir, `${base}.pem`);
      return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), keyFile, certFile };
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Identity provider

export interface TestUser {
  /** Claims added to every token of this user (sub is the user id). */
  claims?: Record<string, unknown>;
}

export interface TestIdpOptions {
  /** The audience (resource indicator) of JWT and opaque tokens. Default `https://mcp.thv.test`. */
  audience?: string;
  /** Users by subject. Default: alice (groups eng) and bob (groups sales). */
  users?: Record<string, TestUser>;
  /** Access-token lifetime in seconds (default 600). */
  accessTokenTtl?: number;
  /** Reuse a CA (e.g. shared with other TLS stand-ins); default: a new one, removed on close. */
  ca?: TestCa;
}

export interface TestIdp {
  /** `https://127.0.0.1:<port>` (no trailing slash). */
  issuer: string;
  port: number;
  audience: string;
  caFile: string;
  caPem: string;
  ca: TestCa;
  discoveryUrl: string;
  jwksUrl: string;
  tokenUrl: string;
  introspectionUrl: string;
  /** A confidential client allowed to introspect any token (what the proxy is configured with). */
  introspection: { clientId: string; clientSecret: string };
  /** The public JWKS (RS256 kid `rs-1`, ES256 kid `es-1`). */
  jwks: { keys: JWK[] };
  /** A JWT access token for `subject` from the token endpoint (client_credentials + resource). */
  jwt(subject?: string, options?: { alg?: 'RS256' | 'ES256'; scope?: string }): Promise<string>;
  /** An opaque access token for `subject` (introspection returns the same claims as the JWT). */
  opaque(subject?: string, options?: { scope?: string }): Promise<string>;
  /** Revokes a token at the provider (RFC 7009); introspection then answers `active: false`. */
  revoke(token: string): Promise<void>;
  /**
   * Signs arbitrary claims with the provider's RS256 key (kid `rs-1`). Defaults: iss, aud, sub `alice`,
   * iat now, exp now+300. A claim or header value of `undefined` removes it.
   */
  sign(claims?: Record<string, unknown>, header?: Record<string, unknown>): Promise<string>;
  /** The provider's RS256 private key (kid `rs-1`), for hand-made signatures. */
  rsPrivateKey: CryptoKey;
  /** Requests served so far, by path (e.g. `/jwks`, `/.well-known/openid-configuration`). */
  hits: Map<string, number>;
  /** Answer requests yourself (return true when handled); `undefined` restores normal service. */
  intercept(handler: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined): void;
  /** undici fetch that trusts the test CA. */
  fetch: typeof fetch;
  close(): Promise<void>;
}

const OPAQUE_RESOURCE = 'https://opaque.thv.test/';
const ES256_RESOURCE = 'https://es256.thv.test/';
const SCOPES = 'openid mcp:read mcp:write';

export const DEFAULT_USERS: Record<string, TestUser> = {
  alice: { claims: { name: 'Alice Example', email: 'alice@example.test', groups: ['eng'], org: 'acme' } },
  bob: { claims: { name: 'Bob Example', email: 'bob@example.test', groups: ['sales'], org: 'acme' } },
};

export async function startTestIdp(options: TestIdpOptions = {}): Promise<TestIdp> {
  const audience = options.audience ?? 'https://mcp.thv.test';
  const users = options.users ?? DEFAULT_USERS;
  const ttl = options.accessTokenTtl ?? 600;
  const ownCa = options.ca === undefined;
  const ca = options.ca ?? createTestCa();
  const serverCert = ca.issue('idp');

  const rs = await generateKeyPair('RS256', { extractable: true });
  const es = await generateKeyPair('ES256', { extractable: true });
  const rsPrivate = { ...(await exportJWK(rs.privateKey)), kid: 'rs-1', alg: 'RS256', use: 'sig' };
  const esPrivate = { ...(await exportJWK(es.privateKey)), kid: 'es-1', alg: 'ES256', use: 'sig' };
  const publicJwks = {
    keys: [
      { ...(await exportJWK(rs.publicKey)), kid: 'rs-1', alg: 'RS256', use: 'sig' },
      { ...(await exportJWK(es.publicKey)), kid: 'es-1', alg: 'ES256', use: 'sig' },
    ],
  };

  const hits = new Map<string, number>();
  let interceptor: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  let callback: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer({ key: serverCert.key, cert: serverCert.cert }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (interceptor?.(req, res)) return;
    callback!(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const issuer = `https://127.0.0.1:${port}`;

  const introspection = { clientId: 'thv-proxy', clientSecret: `thv-proxy-secret-${randomBytes(12).toString('hex')}` };
  const userSecret = (id: string): string => `${id}-secret-${port}`;
  const clients = [
    {
      client_id: introspection.clientId,
      client_secret: introspection.clientSecret,
      grant_types: [],
      response_types: [],
      redirect_uris: [],
    },
    ...Object.keys(users).map((id) => ({
      client_id: id,
      client_secret: userSecret(id),
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: SCOPES,
    })),
  ];

  const provider = new Provider(issuer, {
    clients,
    jwks: { keys: [rsPrivate, esPrivate] },
    scopes: SCOPES.split(' '),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true, allowedPolicy: async () => true },
      revocation: { enabled: true, allowedPolicy: async () => true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => audience,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          const common = { scope: SCOPES, audience, accessTokenTTL: ttl };
          if (indicator === audience) return { ...common, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } };
          if (indicator === ES256_RESOURCE) return { ...common, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } };
          if (indicator === OPAQUE_RESOURCE) return { ...common, accessTokenFormat: 'opaque' };
          throw new oidcErrors.InvalidTarget();
        },
      },
    },
    // `sub` for introspection answers (client_credentials tokens have no account); JWTs get sub = client id.
    extraTokenClaims: async (_ctx, token) => {
      const id = (token as unknown as { clientId?: string }).clientId ?? '';
      return { sub: id, ...(users[id]?.claims ?? {}) };
    },
    ttl: { ClientCredentials: ttl },
  });
  // Quiet the provider's "server_error" logging in tests that make it fail on purpose.
  provider.on('server_error', () => {});
  callback = provider.callback() as unknown as (req: IncomingMessage, res: ServerResponse) => void;

  const agent = new Agent({ connect: { ca: ca.caPem } });
  const tlsFetch = ((input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) =>
    fetch(input, { ...init, dispatcher: agent })) as typeof fetch;

  const tokenUrl = `${issuer}/token`;
  async function clientCredentials(subject: string, resource: string, scope: string | undefined): Promise<string> {
    if (users[subject] === undefined) throw new Error(`test IdP has no user ${subject}`);
    const body = new URLSearchParams({ grant_type: 'client_credentials', resource });
    if (scope !== undefined) body.set('scope', scope);
    const res = await tlsFetch(tokenUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${subject}:${userSecret(subject)}`).toString('base64')}`,
      },
      body: body.toString(),
    });
    const json = (await res.json()) as { access_token?: string; error?: string; error_description?: string };
    if (res.status !== 200 || typeof json.access_token !== 'string') {
      throw new Error(`token request failed: ${res.status} ${json.error ?? ''} ${json.error_description ?? ''}`);
    }
    return json.access_token;
  }

  return {
    issuer,
    port,
    audience,
    caFile: ca.caFile,
    caPem: ca.caPem,
    ca,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    jwksUrl: `${issuer}/jwks`,
    tokenUrl,
    introspectionUrl: `${issuer}/token/introspection`,
    introspection,
    jwks: publicJwks,
    jwt: (subject = 'alice', o = {}) => clientCredentials(subject, o.alg === 'ES256' ? ES256_RESOURCE : audience, o.scope ?? 'mcp:read'),
    opaque: (subject = 'alice', o = {}) => clientCredentials(subject, OPAQUE_RESOURCE, o.scope ?? 'mcp:read'),
    async revoke(token) {
      const res = await tlsFetch(`${issuer}/token/revocation`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${introspection.clientId}:${introspection.clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ token }).toString(),
      });
      if (res.status !== 200) throw new Error(`revocation failed: ${res.status}`);
    },
    async sign(claims = {}, header = {}) {
      const now = Math.floor(Date.now() / 1000);
      const payload: Record<string, unknown> = { iss: issuer, aud: audience, sub: 'alice', iat: now, exp: now + 300, ...claims };
      for (const k of Object.keys(payload)) if (payload[k] === undefined) delete payload[k];
      const h: Record<string, unknown> = { alg: 'RS256', kid: 'rs-1', typ: 'JWT', ...header };
      for (const k of Object.keys(h)) if (h[k] === undefined) delete h[k];
      return new SignJWT(payload).setProtectedHeader(h as { alg: string }).sign(rs.privateKey);
    },
    rsPrivateKey: rs.privateKey,
    hits,
    intercept(handler) {
      interceptor = handler;
    },
    fetch: tlsFetch,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await agent.close();
      if (ownCa) ca.cleanup();
    },
  };
}
