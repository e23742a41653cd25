/**
 * Test parts for remote workloads:
 *   - startRemoteAs: a real oidc-provider (TLS, test CA) as the remote's authorization server, with
 *     dynamic registration, PKCE, refresh tokens, dev interactions (login + consent forms a test client
 *     completes) and an RFC 8693 token-exchange grant that accepts JWTs of another test IdP;
 *   - startGatedRemote: the conformance fixture server (--http) behind a gate that demands an access token
 *     of that provider and otherwise answers 401 + WWW-Authenticate + RFC 9728 metadata;
 *   - completeAuthorization: plays the browser for a printed authorization URL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, type JWK } from 'jose';
import Provider, { errors as oidcErrors } from 'oidc-provider';
import { Agent, fetch as undiciFetch } from 'undici';
import { freePort } from '../../src/proxy/net.js';
import type { TestCa } from '../helpers/oidc-provider.js';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

export interface RemoteAs {
  issuer: string;
  provider: Provider;
  /** Grant counts by type (authorization_code, refresh_token, token-exchange), and registrations. */
  counts: Map<string, number>;
  /** The confidential client allowed to exchange tokens. */
  exchanger: { clientId: string; clientSecret: string };
  tokenUrl: string;
  /** Accepts the provider's access tokens (opaque), and says whose and whether still valid. */
  check(token: string): Promise<{ accountId: string; scopes: string } | undefined>;
  fetch: typeof fetch;
  close(): Promise<void>;
}

export interface RemoteAsOptions {
  ca: TestCa;
  /** Access-token lifetime in seconds (default 600). */
  accessTokenTtl?: number;
  /** The subject-token issuer whose JWTs the token-exchange grant accepts. */
  subjectIssuer?: { issuer: string; audience: string; jwks: { keys: JWK[] } };
}

export async function startRemoteAs(o: RemoteAsOptions): Promise<RemoteAs> {
  const cert = o.ca.issue('remote-as');
  let callback: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const counts = new Map<string, number>();
  const bump = (k: string): void => void counts.set(k, (counts.get(k) ?? 0) + 1);
  const server: HttpsServer = createHttpsServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    if (req.method === 'POST' && req.url?.startsWith('/reg')) bump('registration');
    callback!(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rs = await generateKeyPair('RS256', { extractable: true });
  const exchanger = { clientId: 'exchanger', clientSecret: `exchanger-secret-${Date.now()}` };
  const ttl = o.accessTokenTtl ?? 600;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: exchanger.clientId,
        client_secret: exchanger.clientSecret,
        grant_types: [TOKEN_EXCHANGE],
        response_types: [],
        redirect_uris: [],
        scope: 'mcp',
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(rs.privateKey)), kid: 'as-1', alg: 'RS256', use: 'sig' }] },
    scopes: ['openid', 'offline_access', 'mcp'],
    claims: { openid: ['sub'] },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      // RFC 8707: thv names the remote (from its RFC 9728 metadata) as the resource; the remote is ours.
      resourceIndicators: {
        enabled: true,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(indicator)) throw new oidcErrors.InvalidTarget();
          return { scope: 'mcp offline_access', accessTokenFormat: 'opaque', audience: indicator };
        },
      },
    },
    // Every client that may use refresh tokens gets one (no offline_access consent dance needed).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: { AccessToken: ttl, RefreshToken: 3600, Interaction: 600, Session: 600, Grant: 3600 },
    rotateRefreshToken: true,
  });
  provider.on('server_error', () => {});
  provider.on('grant.success', (ctx) => {
    const gt = (ctx.oidc.params?.grant_type as string | undefined) ?? 'unknown';
    bump(gt === TOKEN_EXCHANGE ? 'token-exchange' : gt);
  });
  // RFC 8693: accept a JWT of the subject issuer, answer an access token of this provider for the same subject.
  const subjectKeys = o.subjectIssuer ? createLocalJWKSet(o.subjectIssuer.jwks) : undefined;
  provider.registerGrantType(
    TOKEN_EXCHANGE,
    async (ctx) => {
      const p = ctx.oidc.params as Record<string, string | undefined>;
      if (!subjectKeys || !o.subjectIssuer) throw new oidcErrors.InvalidGrant('token exchange not configured');
      if (p.subject_token_type !== 'urn:ietf:params:oauth:token-type:access_token') throw new oidcErrors.InvalidRequest('unsupported subject_token_type');
      let sub: string;
      try {
        const { payload } = await jwtVerify(p.subject_token ?? '', subjectKeys, { issuer: o.subjectIssuer.issuer, audience: o.subjectIssuer.audience });
        sub = String(payload.sub);
        // A subject the remote's authorization server does not know (the exchange must fail).
        if (sub === 'mallory') throw new Error('unknown subject');
      } catch {
        throw new oidcErrors.InvalidGrant('subject token invalid');
      }
      const client = ctx.oidc.client!;
      const at = new provider.AccessToken({ accountId: sub, client, scope: p.scope ?? 'mcp', gty: 'token-exchange', grantId: `te-${sub}` } as never);
      const value = await at.save();
      ctx.body = {
        access_token: value,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
        expires_in: at.expiration,
        scope: at.scope,
      };
    },
    ['subject_token', 'subject_token_type', 'audience', 'scope', 'requested_token_type', 'resource'],
  );
  callback = provider.callback() as unknown as (req: IncomingMessage, res: ServerResponse) => void;
  const agent = new Agent({ connect: { ca: o.ca.caPem } });
  const tlsFetch = ((input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) =>
    undiciFetch(input as never, { ...(init as object), dispatcher: agent } as never)) as unknown as typeof fetch;
  return {
    issuer,
    provider,
    counts,
    exchanger,
    tokenUrl: `${issuer}/token`,
    async check(token) {
      const at = await provider.AccessToken.find(token);
      if (!at || at.isExpired) return undefined;
      return { accountId: at.accountId ?? '', scopes: at.scope ?? '' };
    },
    fetch: tlsFetch,
    async close() {
      await agent.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export interface GatedRemote {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  /** Requests that reached the MCP server, with the account the token belonged to. */
  seen: Array<{ account: string; method: string; url: string; headers: Record<string, string | string[] | undefined> }>;
  /** 401 answers so far. */
  refused: number;
  close(): Promise<void>;
}

const FIXTURE = fileURLToPath(new URL('../fixtures/conformance-server.ts', import.meta.url));
const FIXTURE_SH = fileURLToPath(new URL('../fixtures/conformance-server.sh', import.meta.url));

/**
 * The conformance fixture behind a gate. `accept` decides whether a bearer token is good; by default
 * the AS's access tokens. `always401` refuses everything (a remote whose login never works).
 */
export async function startGatedRemote(as: { issuer: string; check: RemoteAs['check'] } | undefined, opts: { always401?: boolean; staticToken?: string; open?: boolean } = {}): Promise<GatedRemote> {
  const mcpPort = await freePort('127.0.0.1');
  const child: ChildProcess = spawn(FIXTURE_SH, [FIXTURE, '--http'], {
    env: { ...process.env, MCP_PORT: String(mcpPort), MCP_HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let childErr = '';
  child.stderr!.on('data', (d: Buffer) => (childErr += d.toString()));
  const seen: GatedRemote['seen'] = [];
  let refused = 0;
  let origin = '';
  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    // An open remote publishes no RFC 9728 document: a 200 there means OAuth (spec §7.2 step 2c).
    if (path.startsWith('/.well-known/oauth-protected-resource')) {
      if (opts.open) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ resource: `${origin}/mcp`, authorization_servers: as ? [as.issuer] : [], scopes_supported: ['openid', 'offline_access', 'mcp'] }));
      return;
    }
    const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    let account: string | undefined = opts.open ? 'anonymous' : undefined;
    if (!opts.always401 && !opts.open && m) {
      if (opts.staticToken !== undefined) account = m[1] === opts.staticToken ? 'static' : undefined;
      else if (as) account = (await as.check(m[1]!))?.accountId;
    }
    if (account === undefined) {
      refused++;
      res.writeHead(401, {
        'www-authenticate': `Bearer realm="mcp", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"${m ? ', error="invalid_token"' : ''}`,
        'content-type': 'application/json',
      });
      res.end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    seen.push({ account, method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } });
    const headers = { ...req.headers, host: `127.0.0.1:${mcpPort}` };
    // The fixture serves /mcp only; the gate stands for a remote that serves it under any path.
    delete headers.authorization;
    const up = request({ host: '127.0.0.1', port: mcpPort, path: '/mcp', method: req.method, headers }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Wait for the fixture to listen.
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`conformance fixture exited: ${childErr}`);
    const ok = await fetch(`http://127.0.0.1:${mcpPort}/mcp`, { method: 'GET' }).then(() => true, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`conformance fixture did not listen: ${childErr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `${origin}/mcp`,
    seen,
    get refused() {
      return refused;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    },
  };
}

/**
 * Plays the browser: follows the authorization URL through the provider's login and consent pages
 * (posting the forms as `login`), and returns the final redirect to the callback, not yet requested.
 */
export async function authorizeInProvider(authUrl: string, tlsFetch: typeof fetch, login = 'alice'): Promise<URL> {
  const cookies = new Map<string, string>();
  const cookieHeader = (): string => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const remember = (res: Response): void => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
  };
  let url = new URL(authUrl);
  let method = 'GET';
  let body: string | undefined;
  for (let step = 0; step < 20; step++) {
    const res = await tlsFetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: cookieHeader(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body,
    });
    remember(res);
    method = 'GET';
    body = undefined;
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const next = new URL(res.headers.get('location')!, url);
      if (next.pathname === '/callback') return next;
      url = next;
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`authorization page answered ${res.status}: ${html.slice(0, 300)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`unexpected page: ${html.slice(0, 300)}`);
    url = new URL(action.replace(/&amp;/g, '&'), url);
    method = 'POST';
    body = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'x' } : { prompt }).toString();
  }
  throw new Error('authorization did not reach the callback');
}

/** Requests the callback URL on 127.0.0.1 (the redirect names localhost). */
export async function deliverCallback(callback: URL): Promise<Response> {
  const u = new URL(callback);
  u.hostname = '127.0.0.1';
  return fetch(u);
}

/** Resolves with the first match of `re` in a growing text source (bounded). */
export async function waitForMatch(read: () => string, re: RegExp, timeoutMs = 20_000, gone?: () => string | undefined): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = re.exec(read());
    if (m) return m;
    const why = gone?.();
    if (why !== undefined) throw new Error(`${why} before ${re} appeared:\n${why}`);
    if (Date.now() > deadline) throw new Error(`no ${re} within ${timeoutMs} ms in:\n${read()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface ThvProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The proxy URL, once printed. */
  url(timeoutMs?: number): Promise<string>;
  /** The authorization URL thv prints with --remote-auth-skip-browser. */
  authUrl(timeoutMs?: number): Promise<string>;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

const THV_BIN = fileURLToPath(new URL('../../bin/thv.js', import.meta.url));

/** `thv run …` without waiting for readiness (the login happens first). */
export function spawnThv(args: string[], env: NodeJS.ProcessEnv): ThvProcess {
  const child = spawn(process.execPath, [THV_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  const gone = (): string | undefined => (child.exitCode !== null ? `thv exited with ${child.exitCode}\nstdout: ${out}\nstderr: ${err}` : undefined);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    url: async (t) => (await waitForMatch(() => out, /available at (http:\/\/\S+)/, t, gone))[1]!,
    authUrl: async (t) => (await waitForMatch(() => err, /Please open this URL in your browser: (\S+)/, t, gone))[1]!,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(killer);
      return code;
    },
  };
}
