/**
 * Remote workloads when things go wrong (unreachable remote, a remote that answers 401 forever, a
 * callback with the wrong state, nobody logging in) and the static alternatives (bearer token, token
 * file, forwarded headers, no auth at all, path mapping). Each failure ends `thv run` with exit status 1
 * and a clear message; no token or secret appears in the output.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort } from '../../src/proxy/net.js';
import { createTestCa, type TestCa } from '../helpers/oidc-provider.js';
import { authorizeInProvider, deliverCallback, spawnThv, startGatedRemote, startRemoteAs, type GatedRemote, type RemoteAs, type ThvProcess } from './helpers.js';

async function callTool(url: string): Promise<string> {
  const client = new Client({ name: 'remote-failures', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const r = (await client.callTool({ name: 'test_simple_text', arguments: {} })) as { content: Array<{ text?: string }> };
    return r.content[0]?.text ?? '';
  } finally {
    await client.close();
  }
}

describe('thv run <remote URL>: failures and static credentials', () => {
  let ca: TestCa;
  let as: RemoteAs;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const procs: ThvProcess[] = [];
  const remotes: GatedRemote[] = [];

  before(async () => {
    ca = createTestCa();
    as = await startRemoteAs({ ca });
    home = mkdtempSync(join(tmpdir(), 'thv-remote-fail-'));
    // No secrets store: logins are not kept, so every run here starts from scratch.
    env = { HOME: home, XDG_CONFIG_HOME: join(home, 'c'), XDG_DATA_HOME: join(home, 'd'), XDG_STATE_HOME: join(home, 's'), NODE_EXTRA_CA_CERTS: ca.caFile, TOOLHIVE_SECRETS_PROVIDER: 'none' };
  });
  after(async () => {
    for (const p of procs) await p.stop();
    for (const r of remotes) await r.close();
    await as?.close();
    ca?.cleanup();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const run = (args: string[], extraEnv: NodeJS.ProcessEnv = {}): ThvProcess => {
    const p = spawnThv(['run', '--foreground', ...args], { ...env, ...extraEnv });
    procs.push(p);
    return p;
  };
  const gated = async (...a: Parameters<typeof startGatedRemote>): Promise<GatedRemote> => {
    const r = await startGatedRemote(...a);
    remotes.push(r);
    return r;
  };

  it('an unreachable remote ends with a clear message', async () => {
    const port = await freePort('127.0.0.1');
    const p = run([`http://127.0.0.1:${port}/mcp`]);
    assert.equal(await p.exited, 1);
    assert.match(p.stderr(), new RegExp(`the remote MCP server http://127\\.0\\.0\\.1:${port}/mcp cannot be reached: .*ECONNREFUSED`));
  });

  it('a remote that answers 401 forever: the login succeeds, then the refusal is reported', async () => {
    const remote = await gated(as, { always401: true });
    const cb = await freePort('127.0.0.1');
    const p = run(['--remote-auth-skip-browser', '--remote-auth-callback-port', String(cb), remote.url]);
    const callback = await authorizeInProvider(await p.authUrl(), as.fetch);
    await deliverCallback(callback);
    assert.equal(await p.exited, 1);
    assert.match(p.stderr(), /the remote MCP server refused the access token it asked for with HTTP 401 \(invalid_token\)/);
    for (const m of p.stderr().matchAll(/[A-Za-z0-9_-]{43}/g)) assert.equal(await as.provider.AccessToken.find(m[0]), undefined, 'token in output');
  });

  it('a callback with the wrong state fails the login', async () => {
    const remote = await gated(as);
    const cb = await freePort('127.0.0.1');
    const p = run(['--remote-auth-skip-browser', '--remote-auth-callback-port', String(cb), remote.url]);
    const callback = await authorizeInProvider(await p.authUrl(), as.fetch);
    callback.searchParams.set('state', 'forged-state');
    const page = await deliverCallback(callback);
    assert.equal(page.status, 400);
    assert.match(await page.text(), /invalid state parameter/);
    assert.equal(await p.exited, 1);
    assert.match(p.stderr(), /OAuth authorization failed: invalid state parameter/);
    assert.ok(!p.stderr().includes(callback.searchParams.get('code')!), 'the code is not logged');
  });

  it('nobody logs in: the flow times out after --remote-auth-timeout', async () => {
    const remote = await gated(as);
    const cb = await freePort('127.0.0.1');
    const p = run(['--remote-auth-skip-browser', '--remote-auth-timeout', '2s', '--remote-auth-callback-port', String(cb), remote.url]);
    assert.equal(await p.exited, 1);
    assert.match(p.stderr(), /OAuth flow timed out after 2s - user did not complete authentication/);
  });

  it('a static bearer token (flag, file, environment) is injected and never printed; a wrong one is refused at start', async () => {
    const secret = `static-${Date.now()}-token`;
    const remote = await gated(undefined, { staticToken: secret });
    const viaFlag = run(['--remote-auth-bearer-token', secret, '--remote-forward-headers', 'X-Tenant=acme', remote.url]);
    const url = await viaFlag.url();
    assert.match(await callTool(url), /simple text/i);
    assert.equal(remote.seen.at(-1)?.account, 'static');
    assert.equal(remote.seen.at(-1)?.headers['x-tenant'], 'acme');
    assert.equal(await viaFlag.stop(), 0);
    assert.ok(!(viaFlag.stdout() + viaFlag.stderr()).includes(secret));

    const file = join(home, 'token');
    writeFileSync(file, `${secret}\n`);
    const viaFile = run(['--remote-auth-bearer-token-file', file, remote.url]);
    assert.match(await callTool(await viaFile.url()), /simple text/i);
    assert.equal(await viaFile.stop(), 0);

    const viaEnv = run([remote.url], { TOOLHIVE_REMOTE_AUTH_BEARER_TOKEN: secret });
    assert.match(await callTool(await viaEnv.url()), /simple text/i);
    assert.equal(await viaEnv.stop(), 0);

    const wrong = run(['--remote-auth-bearer-token', 'not-the-token', remote.url]);
    assert.equal(await wrong.exited, 1);
    assert.match(wrong.stderr(), /refused the configured bearer token with HTTP 401/);
    assert.ok(!wrong.stderr().includes('not-the-token'));
  });

  it('a remote without auth: any client path maps to the remote path, remote query first', async () => {
    const remote = await gated(undefined, { open: true });
    const p = run(['--name', 'open-remote', `${remote.url}?tenant=a`]);
    const url = await p.url();
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/, 'the query is dropped from the client URL');
    assert.match(p.stderr(), /asks for no authentication/);
    const res = await fetch(`${new URL(url).origin}/anything?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.equal(remote.seen.at(-1)?.url, '/mcp?tenant=a&x=1');
    assert.match(await callTool(url), /simple text/i);
    assert.equal(await p.stop(), 0);
  });
});
