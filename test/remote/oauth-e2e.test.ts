/**
 * End to end: `thv run <remote URL>` against a remote MCP server (the conformance fixture behind a gate)
 * whose authorization server is a real oidc-provider over TLS. Shows dynamic registration, PKCE, the
 * printed URL completed by a test "browser", refresh after expiry, restart without a new login (encrypted
 * secrets store), and token exchange of an inbound token. Also checks nothing secret reaches the logs.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort } from '../../src/proxy/net.js';
import { createTestCa, startTestIdp, type TestCa, type TestIdp } from '../helpers/oidc-provider.js';
import { authorizeInProvider, deliverCallback, spawnThv, startGatedRemote, startRemoteAs, waitForMatch, type GatedRemote, type RemoteAs, type ThvProcess } from './helpers.js';

async function callTool(url: string, headers: Record<string, string> = {}): Promise<string> {
  const client = new Client({ name: 'remote-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  try {
    const r = (await client.callTool({ name: 'test_simple_text', arguments: {} })) as { content: Array<{ text?: string }> };
    return r.content[0]?.text ?? '';
  } finally {
    await client.close();
  }
}

/** Every token the provider issued must stay out of thv's output. */
async function assertNoTokensIn(text: string, as: RemoteAs): Promise<void> {
  assert.doesNotMatch(text, /"(access|refresh)_token"/);
  for (const m of text.matchAll(/[A-Za-z0-9_-]{43}/g)) {
    const found = (await as.provider.AccessToken.find(m[0]).catch(() => undefined)) ?? (await as.provider.RefreshToken.find(m[0]).catch(() => undefined));
    assert.equal(found, undefined, 'a token appears in the output');
  }
}

describe('thv run <remote URL> with OAuth toward the remote', () => {
  let ca: TestCa;
  let idp: TestIdp;
  let as: RemoteAs;
  let remote: GatedRemote;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const procs: ThvProcess[] = [];

  before(async () => {
    ca = createTestCa();
    idp = await startTestIdp({ ca });
    // Short access tokens, so that a refresh happens within the test.
    as = await startRemoteAs({ ca, accessTokenTtl: 4, subjectIssuer: { issuer: idp.issuer, audience: idp.audience, jwks: idp.jwks } });
    remote = await startGatedRemote(as);
    home = mkdtempSync(join(tmpdir(), 'thv-remote-'));
    env = {
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_DATA_HOME: join(home, 'data'),
      XDG_STATE_HOME: join(home, 'state'),
      XDG_CACHE_HOME: join(home, 'cache'),
      NODE_EXTRA_CA_CERTS: ca.caFile,
      TOOLHIVE_SECRETS_PROVIDER: 'encrypted',
      TOOLHIVE_SECRETS_PASSWORD: 'remote-e2e-store-password',
    };
  });
  after(async () => {
    for (const p of procs) await p.stop();
    await remote?.close();
    await as?.close();
    await idp?.close();
    ca?.cleanup();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('registers, logs in with PKCE, proxies, refreshes after expiry, and restarts without a new login', async () => {
    const callbackPort = await freePort('127.0.0.1');
    const args = ['run', '--foreground', '--name', 'oauth-remote', '--remote-auth-skip-browser', '--remote-auth-callback-port', String(callbackPort), remote.url];
    const thv = spawnThv(args, env);
    procs.push(thv);
    const authUrl = new URL(await thv.authUrl());
    assert.equal(authUrl.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(authUrl.searchParams.get('code_challenge'));
    assert.equal(authUrl.searchParams.get('redirect_uri'), `http://localhost:${callbackPort}/callback`);
    assert.equal(as.counts.get('registration'), 1, 'one dynamic registration');
    const callback = await authorizeInProvider(authUrl.href, as.fetch);
    const page = await deliverCallback(callback);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    const url = await thv.url();
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.equal(as.counts.get('authorization_code'), 1);

    assert.match(await callTool(url), /simple text/i);
    assert.equal(remote.seen.at(-1)?.account, 'alice');
    // The remote sees its own scheme and not our host.
    assert.equal(remote.seen.at(-1)?.headers['x-forwarded-proto'], 'http');
    assert.equal(remote.seen.at(-1)?.headers['x-forwarded-host'], undefined);

    // Access tokens live 4 s: the background refresh replaces them before they expire.
    await waitForMatch(() => String(as.counts.get('refresh_token') ?? 0), /^[1-9]/, 15_000);
    await new Promise((r) => setTimeout(r, 4500)); // outlive the first token: a condition we cannot poll for
    assert.match(await callTool(url), /simple text/i);
    assert.equal(remote.seen.at(-1)?.account, 'alice');

    assert.equal(await thv.stop(), 0);
    await assertNoTokensIn(thv.stdout() + thv.stderr(), as);

    // Restart: the refresh token kept in the encrypted store logs in without a browser.
    const codesBefore = as.counts.get('authorization_code');
    const again = spawnThv(args, env);
    procs.push(again);
    const url2 = await again.url();
    assert.doesNotMatch(again.stderr(), /Please open this URL/);
    assert.equal(as.counts.get('authorization_code'), codesBefore, 'no new authorization');
    assert.equal(as.counts.get('registration'), 1, 'no new registration');
    assert.match(await callTool(url2), /simple text/i);
    assert.equal(await again.stop(), 0);
    await assertNoTokensIn(again.stdout() + again.stderr(), as);
  });

  it('exchanges the inbound token (RFC 8693) for one the remote accepts, once per token', async () => {
    const thv = spawnThv(
      ['run', '--foreground', '--name', 'te-remote',
        '--oidc-issuer', idp.issuer, '--oidc-audience', idp.audience, '--thv-ca-bundle', ca.caFile, '--jwks-allow-private-ip',
        '--token-exchange-url', as.tokenUrl, '--token-exchange-client-id', as.exchanger.clientId,
        '--token-exchange-client-secret', as.exchanger.clientSecret, '--token-exchange-scopes', 'mcp',
        remote.url],
      env,
    );
    procs.push(thv);
    const url = await thv.url();
    const before = as.counts.get('token-exchange') ?? 0;
    const token = await idp.jwt('bob');
    assert.match(await callTool(url, { Authorization: `Bearer ${token}` }), /simple text/i);
    assert.equal(remote.seen.at(-1)?.account, 'bob');
    const used = (as.counts.get('token-exchange') ?? 0) - before;
    assert.equal(used, 1, 'one exchange for the whole session (cached until expiry)');

    // A token the exchange refuses: 401 without the token endpoint's answer.
    const forged = await idp.sign({ sub: 'mallory' });
    const res = await fetch(url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${forged}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    assert.equal(res.status, 401);
    assert.equal(await res.text(), 'Token exchange failed\n');
    assert.equal(await thv.stop(), 0);
    assert.ok(!thv.stderr().includes(as.exchanger.clientSecret));
    assert.ok(!thv.stderr().includes(token));
  });
});
