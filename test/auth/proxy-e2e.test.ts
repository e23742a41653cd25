/**
 * End to end: `thv run --oidc-*` of the echo server against a real OpenID provider (TLS, test CA trusted
 * through --thv-ca-bundle). The MCP SDK client works with a JWT and with an opaque token; callers
 * without a valid token get 401 with a WWW-Authenticate that links to the RFC 9728 document; no token
 * or secret shows up in any log line or file thv writes. Without OIDC flags: local user, with a warning.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ECHO_SERVER, initializeBody, post, runThv, startThv, type RunningThv } from '../helpers/thv.js';
import { startTestIdp, type TestIdp } from '../helpers/oidc-provider.js';

let idp: TestIdp;
let home: string;
let thv: RunningThv;
let output = '';
const secrets: string[] = [];

function isolatedEnv(): NodeJS.ProcessEnv {
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_STATE_HOME: join(home, 'state'),
    XDG_CACHE_HOME: join(home, 'cache'),
    TOOLHIVE_DEBUG: 'true',
  };
}

before(async () => {
  idp = await startTestIdp();
  home = mkdtempSync(join(tmpdir(), 'thv-auth-e2e-'));
  secrets.push(idp.introspection.clientSecret);
  thv = await startThv(
    [
      'run', '--runtime', 'process', '--foreground', '--debug',
      '--oidc-issuer', idp.issuer,
      '--oidc-audience', idp.audience,
      '--oidc-introspection-url', idp.introspectionUrl,
      '--oidc-client-id', idp.introspection.clientId,
      '--oidc-client-secret', idp.introspection.clientSecret,
      '--oidc-scopes', 'openid,mcp:read',
      '--thv-ca-bundle', idp.caFile,
      '--jwks-allow-private-ip',
      ECHO_SERVER,
    ],
    { env: isolatedEnv() },
  );
});
after(async () => {
  const code = await thv?.stop();
  await idp?.close();
  rmSync(home, { recursive: true, force: true });
  assert.equal(code, 0);
});

async function connect(token: string): Promise<Client> {
  secrets.push(token);
  const client = new Client({ name: 'auth-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(thv.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

describe('thv run with --oidc-* flags', () => {
  it('serves an MCP session to the SDK client with a JWT access token', async () => {
    const client = await connect(await idp.jwt('alice'));
    try {
      const tools = await client.listTools();
      assert.ok(tools.tools.some((t) => t.name === 'echo'));
      const res = await client.callTool({ name: 'echo', arguments: { message: 'through auth' } });
      assert.deepEqual(res.content, [{ type: 'text', text: 'through auth' }]);
    } finally {
      await client.close();
    }
  });

  it('serves an MCP session with an opaque token validated by introspection', async () => {
    const client = await connect(await idp.opaque('bob'));
    try {
      const res = await client.callTool({ name: 'echo', arguments: { message: 'opaque' } });
      assert.deepEqual(res.content, [{ type: 'text', text: 'opaque' }]);
    } finally {
      await client.close();
    }
  });

  it('answers 401 with WWW-Authenticate and a JSON body without a valid token', async () => {
    const expectedMetadata = `${thv.base}/.well-known/oauth-protected-resource/mcp`;
    const cases: Array<Record<string, string>> = [{}, { authorization: `Bearer ${await idp.sign({ exp: 1 })}` }, { authorization: 'Basic eDp5' }];
    for (const headers of cases) {
      if (headers.authorization) secrets.push(headers.authorization.slice(7));
      const res = await post(thv.url, initializeBody(), headers);
      assert.equal(res.status, 401);
      const www = res.headers.get('www-authenticate') ?? '';
      assert.match(www, new RegExp(`^Bearer realm="${idp.issuer}", resource_metadata="${expectedMetadata}", scope="openid mcp:read", error="invalid_(request|token)", error_description="[^"]+"$`));
      const body = (await res.json()) as { error: string; error_description: string };
      assert.match(body.error, /^invalid_(request|token)$/);
    }
  });

  it('serves RFC 9728 metadata, public, with CORS', async () => {
    const res = await fetch(`${thv.base}/.well-known/oauth-protected-resource/mcp`, { headers: { Origin: 'https://app.example' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
    assert.deepEqual(await res.json(), {
      resource: `${thv.base}/mcp`,
      authorization_servers: [idp.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: ['openid', 'mcp:read'],
    });
    const bare = await fetch(`${thv.base}/.well-known/oauth-protected-resource`);
    assert.equal(bare.status, 200);
    assert.equal(bare.headers.get('access-control-allow-origin'), '*');
    const preflight = await fetch(`${thv.base}/.well-known/oauth-protected-resource`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-methods'), 'GET, OPTIONS');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/);
    const other = await fetch(`${thv.base}/.well-known/jwks.json`);
    assert.equal(other.status, 404);
    assert.deepEqual(await other.json(), { error: 'not_found' });
  });

  it('refuses an unusable OIDC configuration at startup without printing the secret', async () => {
    const secret = `cli-secret-${Date.now()}`;
    const res = await runThv(
      ['run', '--runtime', 'process', '--foreground', '--oidc-audience', 'x', '--oidc-client-id', 'c', '--oidc-client-secret', secret,
        '--jwks-auth-token-file', join(home, 'missing-token-file'), ECHO_SERVER],
      { env: isolatedEnv() },
    );
    assert.notEqual(res.code, 0);
    assert.equal(res.code, 2, `exit code; stderr: ${res.stderr}`);
    assert.ok(!(res.stdout + res.stderr).includes(secret));
  });

  it('never writes a token or secret to its logs or files', async () => {
    // Stop first so every log line is flushed; `after` then sees an already-stopped process.
    assert.equal(await thv.stop(), 0);
    output = thv.stderr();
    assert.ok(output.includes('"level":"DEBUG"'), 'debug logging was on');
    const files: string[] = [];
    const walk = (d: string): void => {
      for (const name of readdirSync(d)) {
        const p = join(d, name);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(p);
      }
    };
    walk(home);
    const texts = [output, ...files.map((f) => readFileSync(f, 'utf8'))];
    assert.ok(secrets.length >= 5);
    for (const s of secrets) {
      // Each credential, and its signature part alone for JWTs.
      const needles = [s, ...(s.split('.').length === 3 ? [s.split('.')[2]!] : [])];
      for (const n of needles) for (const t of texts) assert.ok(!t.includes(n), 'a credential appeared in thv output or files');
    }
  });
});

describe('thv run without OIDC flags', () => {
  it('runs as the local user and warns', async (t) => {
    const local = await startThv(['run', '--runtime', 'process', '--foreground', ECHO_SERVER]);
    t.after(() => local.stop());
    const client = new Client({ name: 'auth-e2e-local', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(local.url)));
    const res = await client.callTool({ name: 'echo', arguments: { message: 'no auth' } });
    assert.deepEqual(res.content, [{ type: 'text', text: 'no auth' }]);
    await client.close();
    assert.match(local.stderr(), /no OIDC issuer configured: the proxy accepts every request as the local user/);
    const wk = await fetch(`${local.base}/.well-known/oauth-protected-resource`);
    assert.equal(wk.status, 404);
  });
});
