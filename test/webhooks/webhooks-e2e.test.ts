import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ECHO_SERVER, messagesOf, openSession, post, startThv, type RunningThv } from '../helpers/thv.js';
import { createTestCa, type TestCa } from '../helpers/oidc-provider.js';

/**
 * What it must show, 3: webhooks against local HTTPS servers (certificates from a CA made here).
 * A mutating patch changes what the server and the Cedar policy see; a validating deny is a 403; a slow
 * webhook obeys failure_policy; 422 and out-of-scope patches map to their statuses; and a webhook that
 * checks signatures catches a wrong HMAC secret.
 */

const SECRET = 'webhook-shared-secret';

interface Envelope {
  version: string;
  uid: string;
  timestamp: string;
  principal?: { sub?: string };
  mcp_request: { method: string; params?: { name?: string; arguments?: { message?: string } } };
  context: { server_name: string; source_ip: string; transport: string };
}

interface Hook {
  url: string;
  seen: Envelope[];
  badSignatures: number;
  close(): Promise<void>;
}

type Decide = (env: Envelope) => Promise<{ status: number; body?: unknown }> | { status: number; body?: unknown };

async function startHook(ca: TestCa, secret: string, decide: Decide): Promise<Hook> {
  const { key, cert } = ca.issue('hook');
  const hook: Hook = { url: '', seen: [], badSignatures: 0, close: async () => {} };
  const server: Server = createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const ts = String(req.headers['x-toolhive-timestamp'] ?? '');
        const sig = String(req.headers['x-toolhive-signature'] ?? '');
        const want = `sha256=${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`;
        if (sig.length !== want.length || !timingSafeEqual(Buffer.from(sig), Buffer.from(want)) || Math.abs(Date.now() / 1000 - Number(ts)) > 300) {
          hook.badSignatures++;
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end('{"error":"bad signature"}');
          return;
        }
        const env = JSON.parse(body) as Envelope;
        hook.seen.push(env);
        const out = await decide(env);
        res.writeHead(out.status, { 'content-type': 'application/json' });
        res.end(out.body === undefined ? '' : JSON.stringify(out.body));
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hook.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  hook.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return hook;
}

const allow = (env: Envelope, extra: Record<string, unknown> = {}) => ({ status: 200, body: { version: 'v0.1.0', uid: env.uid, allowed: true, ...extra } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const POLICY = `version: "1.0"
type: cedarv1
cedar:
  policies:
    - 'permit(principal, action == Action::"call_tool", resource == Tool::"echo");'
  entities_json: "[]"
`;

describe('webhooks (HTTPS, HMAC, failure policies)', () => {
  let ca: TestCa;
  let dir: string;
  let mutator: Hook;
  let validator: Hook;
  let slowIgnore: Hook;
  let slowFail: Hook;
  let thv: RunningThv;
  let sid: string;

  before(async () => {
    ca = createTestCa();
    dir = mkdtempSync(join(tmpdir(), 'thv-webhooks-'));
    const secretFile = join(dir, 'hmac.secret');
    writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
    mutator = await startHook(ca, SECRET, (env) => {
      const msg = env.mcp_request.params?.arguments?.message;
      if (msg === 'rename') {
        return allow(env, {
          patch_type: 'json_patch',
          patch: [
            { op: 'replace', path: '/mcp_request/params/name', value: 'echo' },
            { op: 'replace', path: '/mcp_request/params/arguments/message', value: 'renamed-by-webhook' },
          ],
        });
      }
      if (msg === 'reject422') return { status: 422, body: { allowed: false } };
      if (msg === 'refuse') return { status: 200, body: { version: 'v0.1.0', uid: env.uid, allowed: false, reason: 'no' } };
      if (msg === 'escape') return allow(env, { patch_type: 'json_patch', patch: [{ op: 'add', path: '/principal/sub', value: 'root' }] });
      return allow(env);
    });
    validator = await startHook(ca, SECRET, (env) =>
      env.mcp_request.params?.arguments?.message === 'forbidden'
        ? { status: 200, body: { version: 'v0.1.0', uid: env.uid, allowed: false, code: 403, message: 'not this', reason: 'test' } }
        : allow(env),
    );
    slowIgnore = await startHook(ca, SECRET, async (env) => {
      if (env.mcp_request.params?.arguments?.message === 'slow-ignore') await sleep(2500);
      return allow(env);
    });
    slowFail = await startHook(ca, SECRET, async (env) => {
      if (env.mcp_request.params?.arguments?.message === 'slow-fail') await sleep(2500);
      return allow(env);
    });
    const tls = { ca_bundle_path: ca.caFile };
    const common = { tls_config: tls, hmac_secret_ref: secretFile };
    // First file: a validator pointing nowhere (would fail every call) — replaced by name in the second file.
    const first = join(dir, 'hooks-1.yaml');
    writeFileSync(first, stringify({
      mutating: [{ name: 'mutate', url: mutator.url, timeout: '5s', failure_policy: 'fail', ...common }],
      validating: [{ name: 'policy', url: 'https://127.0.0.1:1/nowhere', failure_policy: 'fail', ...common }],
    }));
    const second = join(dir, 'hooks-2.json');
    writeFileSync(second, JSON.stringify({
      validating: [
        { name: 'policy', url: validator.url, timeout: '5s', failure_policy: 'fail', ...common },
        { name: 'slow-ignore', url: slowIgnore.url, timeout: '1s', failure_policy: 'ignore', ...common },
        { name: 'slow-fail', url: slowFail.url, timeout: '1s', failure_policy: 'fail', ...common },
      ],
    }));
    const policy = join(dir, 'authz.yaml');
    writeFileSync(policy, POLICY);
    thv = await startThv([
      'run', '--runtime', 'process', '--foreground', '--name', 'hooked', '--transport', 'stdio',
      '--webhook-config', first, '--webhook-config', second,
      '--authz-config', policy,
      ECHO_SERVER,
    ]);
    sid = await openSession(thv.url);
  });

  after(async () => {
    const code = await thv?.stop();
    await Promise.all([mutator, validator, slowIgnore, slowFail].map((h) => h?.close()));
    ca?.cleanup();
    rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0);
  });

  const call = (tool: string, message: string, id: number) =>
    post(thv.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: { message } } }, { 'mcp-session-id': sid });

  it('sends signed envelopes in the reference format', async () => {
    const res = await call('echo', 'plain', 10);
    assert.equal(res.status, 200);
    const [msg] = await messagesOf(res);
    assert.deepEqual((msg!.result as { content: Array<{ text: string }> }).content[0]!.text, 'plain');
    const env = validator.seen.at(-1)!;
    assert.equal(env.version, 'v0.1.0');
    assert.match(env.uid, /^[0-9a-f-]{36}$/);
    assert.match(env.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(env.mcp_request.method, 'tools/call');
    assert.equal(env.context.server_name, 'hooked');
    assert.equal(env.context.transport, 'stdio');
    assert.match(env.context.source_ip, /^127\.0\.0\.1:\d+$/);
    assert.equal(typeof env.principal?.sub, 'string');
    for (const h of [mutator, validator, slowIgnore, slowFail]) assert.equal(h.badSignatures, 0);
  });

  it('a mutating patch changes what the policy, the validators and the server see', async () => {
    // whoami is forbidden by policy; the webhook turns the call into echo with another message.
    const res = await call('whoami', 'rename', 11);
    assert.equal(res.status, 200, 'the policy saw the patched tool name');
    const [msg] = await messagesOf(res);
    assert.equal((msg!.result as { content: Array<{ text: string }> }).content[0]!.text, 'renamed-by-webhook');
    const seen = validator.seen.at(-1)!;
    assert.equal(seen.mcp_request.params?.name, 'echo');
    assert.equal(seen.mcp_request.params?.arguments?.message, 'renamed-by-webhook');
    // Without the webhook's help the policy still says no.
    const denied = await call('whoami', 'plain', 12);
    assert.equal(denied.status, 403);
    await denied.text();
  });

  it('maps mutating refusals: allowed:false → 403, 422 → 422, out-of-scope patch → 500', async () => {
    let res = await call('echo', 'refuse', 13);
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: 13, error: { code: 403, message: 'Request denied by webhook policy' } });
    res = await call('echo', 'reject422', 14);
    assert.equal(res.status, 422);
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, 403);
    res = await call('echo', 'escape', 15);
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: 15, error: { code: 403, message: 'Webhook error' } });
  });

  it('a validating deny is a 403', async () => {
    const res = await call('echo', 'forbidden', 16);
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: 16, error: { code: 403, message: 'Request denied by policy' } });
  });

  it('a slow webhook obeys failure_policy', async () => {
    let t0 = Date.now();
    let res = await call('echo', 'slow-ignore', 17);
    assert.equal(res.status, 200, 'ignore: the request carries on');
    await res.text();
    let took = Date.now() - t0;
    assert.ok(took >= 900 && took < 2400, `timed out after its 1s timeout (took ${took} ms)`);
    t0 = Date.now();
    res = await call('echo', 'slow-fail', 18);
    assert.equal(res.status, 403, 'fail: the request is denied');
    await res.text();
    took = Date.now() - t0;
    assert.ok(took >= 900 && took < 2400, `timed out after its 1s timeout (took ${took} ms)`);
  });

  it('a wrong HMAC secret is caught by the webhook (and fails closed)', async () => {
    const wrong = join(dir, 'wrong.secret');
    writeFileSync(wrong, 'not-the-shared-secret', { mode: 0o600 });
    const cfg = join(dir, 'hooks-wrong.yaml');
    writeFileSync(cfg, stringify({ validating: [{ name: 'policy', url: validator.url, failure_policy: 'fail', tls_config: { ca_bundle_path: ca.caFile }, hmac_secret_ref: wrong }] }));
    const before = validator.badSignatures;
    const other = await startThv(['run', '--runtime', 'process', '--foreground', '--name', 'wrong-secret', '--transport', 'stdio', '--webhook-config', cfg, ECHO_SERVER]);
    try {
      const res = await post(other.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
      assert.equal(res.status, 403);
      await res.text();
      assert.equal(validator.badSignatures, before + 1, 'the webhook saw a signature it could not verify');
    } finally {
      assert.equal(await other.stop(), 0);
    }
  });

  it('refuses a webhook configuration that is not https', async () => {
    const cfg = join(dir, 'hooks-http.yaml');
    writeFileSync(cfg, stringify({ validating: [{ name: 'plain', url: 'http://127.0.0.1:1/x', failure_policy: 'fail' }] }));
    const { runThv } = await import('../helpers/thv.js');
    const r = await runThv(['run', '--runtime', 'process', '--foreground', '--webhook-config', cfg, ECHO_SERVER]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /https/);
  });
});
