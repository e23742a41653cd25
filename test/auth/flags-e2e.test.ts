/**
 * The `thv run` flags that proxy-e2e does not exercise, end to end: `--oidc-jwks-url` (discovery
 * skipped), `--jwks-auth-token-file` (the bearer sent to the JWKS endpoint), `--oidc-insecure-allow-http`
 * (a plain-HTTP JWKS endpoint; refused at startup without it), `--resource-url` (the RFC 9728 document
 * and the 401's resource_metadata), and the default of `--oidc-scopes` (`scope="openid"`,
 * `scopes_supported: ["openid"]`). Tokens come from a real OpenID provider; the JWKS is served by a
 * local plain-HTTP stand-in that demands the token of the auth token file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ECHO_SERVER, initializeBody, post, runThv, startThv, type RunningThv } from '../helpers/thv.js';
import { sandbox, urlFrom, type Sandbox } from '../workloads/helpers.js';
import { startTestIdp, type TestIdp } from '../helpers/oidc-provider.js';

const RESOURCE = 'https://mcp.example.test/v1/mcp';
const METADATA = 'https://mcp.example.test/.well-known/oauth-protected-resource/v1/mcp';

let idp: TestIdp;
let home: string;
let jwksServer: Server;
let jwksUrl: string;
let tokenFile: string;
let thv: RunningThv;
const podToken = `jwks-reader-${Date.now()}-secret`;
const jwksAuthHeaders: Array<string | undefined> = [];
const secrets: string[] = [podToken];

function isolatedEnv(): NodeJS.ProcessEnv {
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_STATE_HOME: join(home, 'state'),
    XDG_CACHE_HOME: join(home, 'cache'),
  };
}

before(async () => {
  idp = await startTestIdp();
  home = mkdtempSync(join(tmpdir(), 'thv-auth-flags-'));
  tokenFile = join(home, 'jwks-token');
  writeFileSync(tokenFile, `${podToken}\n`);
  jwksServer = createServer((req, res) => {
    jwksAuthHeaders.push(req.headers.authorization);
    if (req.url !== '/keys' || req.headers.authorization !== `Bearer ${podToken}`) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"error":"unauthorized"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(idp.jwks));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/keys`;
  thv = await startThv(
    [
      'run', '--runtime', 'process', '--foreground', '--debug',
      '--oidc-issuer', idp.issuer,
      '--oidc-audience', idp.audience,
      '--oidc-jwks-url', jwksUrl,
      '--oidc-insecure-allow-http',
      '--jwks-allow-private-ip',
      '--jwks-auth-token-file', tokenFile,
      '--resource-url', RESOURCE,
      ECHO_SERVER,
    ],
    { env: isolatedEnv() },
  );
});
after(async () => {
  const code = await thv?.stop();
  jwksServer?.closeAllConnections();
  await new Promise<void>((resolve) => (jwksServer ? jwksServer.close(() => resolve()) : resolve()));
  await idp?.close();
  rmSync(home, { recursive: true, force: true });
  assert.equal(code, 0);
});

describe('thv run --oidc-jwks-url --jwks-auth-token-file --oidc-insecure-allow-http --resource-url', () => {
  it('verifies JWTs against the configured JWKS, fetched over HTTP with the token file, without discovery', async () => {
    const discoveryBefore = idp.hits.get('/.well-known/openid-configuration') ?? 0;
    const token = await idp.jwt('alice');
    secrets.push(token);
    const client = new Client({ name: 'auth-flags-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(thv.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    try {
      const res = await client.callTool({ name: 'echo', arguments: { message: 'jwks over http' } });
      assert.deepEqual(res.content, [{ type: 'text', text: 'jwks over http' }]);
    } finally {
      await client.close();
    }
    assert.ok(jwksAuthHeaders.length >= 1, 'the JWKS endpoint was used');
    assert.ok(jwksAuthHeaders.every((h) => h === `Bearer ${podToken}`), 'every JWKS request carried the token of --jwks-auth-token-file');
    assert.equal(idp.hits.get('/.well-known/openid-configuration') ?? 0, discoveryBefore, 'no discovery with --oidc-jwks-url');
  });

  it('links 401s to the metadata of --resource-url, with the default scope (--oidc-scopes defaults to openid)', async () => {
    const expired = await idp.sign({ exp: Math.floor(Date.now() / 1000) - 5 });
    secrets.push(expired);
    const res = await post(thv.url, initializeBody(), { authorization: `Bearer ${expired}` });
    assert.equal(res.status, 401);
    assert.equal(
      res.headers.get('www-authenticate'),
      `Bearer realm="${idp.issuer}", resource_metadata="${METADATA}", scope="openid", error="invalid_token", error_description="token expired"`,
    );
    assert.deepEqual(await res.json(), { error: 'invalid_token', error_description: 'Invalid token: token expired' });
  });

  it('serves the RFC 9728 document for --resource-url at the path of its resource', async () => {
    const res = await fetch(`${thv.base}/.well-known/oauth-protected-resource/v1/mcp`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      resource: RESOURCE,
      authorization_servers: [idp.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: ['openid'],
    });
  });

  it('refuses a plain-HTTP JWKS URL at startup without --oidc-insecure-allow-http', async () => {
    const r = await runThv(
      ['run', '--runtime', 'process', '--foreground', '--oidc-issuer', idp.issuer, '--oidc-audience', idp.audience,
        '--oidc-jwks-url', jwksUrl, '--jwks-allow-private-ip', '--jwks-auth-token-file', tokenFile, ECHO_SERVER],
      { env: isolatedEnv() },
    );
    assert.equal(r.code, 2, `exit code; stderr: ${r.stderr}`);
    assert.match(r.stderr, /JWKS URL must use https/);
    assert.ok(!(r.stdout + r.stderr).includes(podToken), 'the token file content is not printed');
  });

  it('without --jwks-allow-private-ip a JWKS on a private address is refused: valid tokens get 401, nothing is fetched', async (t) => {
    const strict = await startThv(
      ['run', '--runtime', 'process', '--foreground', '--oidc-issuer', idp.issuer, '--oidc-audience', idp.audience,
        '--oidc-jwks-url', jwksUrl, '--oidc-insecure-allow-http', '--jwks-auth-token-file', tokenFile, ECHO_SERVER],
      { env: isolatedEnv() },
    );
    t.after(() => strict.stop());
    const fetchesBefore = jwksAuthHeaders.length;
    const token = await idp.jwt('alice');
    secrets.push(token);
    const res = await post(strict.url, initializeBody(), { authorization: `Bearer ${token}` });
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token", error_description="[^"]*private IP address[^"]*"$/);
    await res.text();
    assert.equal(jwksAuthHeaders.length, fetchesBefore, 'no request reached the private JWKS endpoint');
  });

  it('never writes the JWKS auth token or a bearer token to its logs or files', async () => {
    assert.equal(await thv.stop(), 0);
    const output = thv.stderr();
    assert.ok(output.includes('"level":"DEBUG"'), 'debug logging was on');
    const files: string[] = [];
    const walk = (d: string): void => {
      for (const name of readdirSync(d)) {
        const p = join(d, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (p !== tokenFile) files.push(p);
      }
    };
    walk(home);
    const texts = [output, ...files.map((f) => readFileSync(f, 'utf8'))];
    for (const s of secrets) {
      const needles = [s, ...(s.split('.').length === 3 ? [s.split('.')[2]!] : [])];
      for (const n of needles) for (const t of texts) assert.ok(!t.includes(n), 'a credential appeared in thv output or files');
    }
  });
});

/**
 * A detached workload is the run that writes state: the RunConfig, the status file and the proxy's log
 * file. The client secret reaches the proxy in memory only, yet introspection (which needs it) works.
 */
describe('detached thv run with OIDC: state files and logs hold no credential', () => {
  let sb: Sandbox;
  before(async () => {
    sb = await sandbox({ TOOLHIVE_DEBUG: 'true' });
  });
  after(() => sb.cleanup());

  it('authenticates JWT and opaque tokens, and no token or secret is in any file it wrote', async () => {
    const clientSecret = idp.introspection.clientSecret;
    const run = await sb.ok([
      'run', '--name', 'authsecrets', '--debug',
      '--oidc-issuer', idp.issuer,
      '--oidc-audience', idp.audience,
      '--oidc-introspection-url', idp.introspectionUrl,
      '--oidc-client-id', idp.introspection.clientId,
      '--oidc-client-secret', clientSecret,
      '--oidc-jwks-url', jwksUrl,
      '--oidc-insecure-allow-http',
      '--jwks-allow-private-ip',
      '--jwks-auth-token-file', tokenFile,
      '--thv-ca-bundle', idp.caFile,
      ECHO_SERVER,
    ]);
    const url = urlFrom(run.stdout);
    const used = [clientSecret, podToken];
    for (const token of [await idp.jwt('alice'), await idp.opaque('bob')]) {
      used.push(token);
      const res = await post(url, initializeBody(), { authorization: `Bearer ${token}` });
      assert.equal(res.status, 200, `token accepted by the detached proxy: ${await res.text()}`);
    }
    const bad = await idp.sign({ exp: Math.floor(Date.now() / 1000) - 5 });
    used.push(bad);
    assert.equal((await post(url, initializeBody(), { authorization: `Bearer ${bad}` })).status, 401);
    await sb.ok(['stop', 'authsecrets']);
    const files = (await sb.files()).filter((f) => f !== 'jwks-token');
    assert.ok(files.some((f) => /runconfigs\/authsecrets\.json$/.test(f)), `run config written: ${files.join(', ')}`);
    assert.ok(files.some((f) => /logs\/authsecrets\.log$/.test(f)), `proxy log written: ${files.join(', ')}`);
    const texts = files.map((f) => [f, readFileSync(join(sb.root, f), 'utf8')] as const);
    const log = texts.find(([f]) => f.endsWith('authsecrets.log'))![1];
    assert.match(log, /DEBUG/, 'the proxy logged at debug level');
    for (const s of used) {
      const needles = [s, ...(s.split('.').length === 3 ? [s.split('.')[2]!] : [])];
      for (const n of needles) for (const [f, t] of texts) assert.ok(!t.includes(n), `a credential appeared in ${f}`);
    }
  });
});
