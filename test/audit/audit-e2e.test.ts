import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ECHO_SERVER, initializeBody, messagesOf, post, startThv, type RunningThv } from '../helpers/thv.js';
import { startTestIdp, type TestIdp } from '../helpers/oidc-provider.js';

/**
 * What it must show, 2: `thv run --audit-config` in front of a real OpenID provider and Cedar policies.
 * A session with allowed, unauthenticated (401), forbidden (403) and failing calls leaves exactly one
 * audit event per request, each with the right type, outcome, subject, source and target, and never
 * the token. The file sink survives rotation (rename, then removal).
 */

interface AuditLine {
  time: string;
  level: string;
  msg: string;
  audit_id: string;
  type: string;
  logged_at: string;
  outcome: string;
  component: string;
  source: { type: string; value: string; extra?: Record<string, string> };
  subjects: Record<string, string>;
  target: Record<string, string>;
  metadata: { extra: Record<string, unknown> };
  data?: { request?: unknown; response?: unknown };
}

function readLines(path: string): AuditLine[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditLine);
}

async function waitForLines(paths: string[], n: number, timeoutMs = 10_000): Promise<AuditLine[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lines = paths.flatMap(readLines);
    if (lines.length >= n || Date.now() > deadline) return lines;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const POLICY = `version: "1.0"
type: cedarv1
cedar:
  policies:
    - 'permit(principal, action == Action::"call_tool", resource == Tool::"echo");'
    - 'permit(principal, action == Action::"call_tool", resource == Tool::"nosuch");'
    - 'permit(principal, action == Action::"call_tool", resource == Tool::"crash");'
  entities_json: "[]"
`;

describe('audit log of a session (real IdP, Cedar policies)', () => {
  let idp: TestIdp;
  let thv: RunningThv;
  let dir: string;
  let logFile: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'thv-audit-'));
    logFile = join(dir, 'audit.log');
    const policy = join(dir, 'authz.yaml');
    writeFileSync(policy, POLICY);
    const auditConfig = join(dir, 'audit.json');
    writeFileSync(auditConfig, JSON.stringify({ component: 'audit-test', logFile, includeRequestData: true, maxDataSize: 4096 }));
    idp = await startTestIdp({ users: { alice: { claims: { name: 'Alice', email: 'alice@example.test' } } } });
    thv = await startThv([
      'run', '--runtime', 'process', '--foreground', '--name', 'audited',
      '--oidc-issuer', idp.issuer,
      '--oidc-audience', idp.audience,
      '--thv-ca-bundle', idp.caFile,
      '--jwks-allow-private-ip',
      '--authz-config', policy,
      '--audit-config', auditConfig,
      '--transport', 'stdio',
      ECHO_SERVER,
    ]);
  });
  after(async () => {
    const code = await thv?.stop();
    await idp?.close();
    rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0);
  });

  it('writes exactly one event per request with the right outcome, and survives rotation', async () => {
    const token = await idp.jwt('alice');
    const auth = { authorization: `Bearer ${token}`, 'user-agent': 'audit-test/1.0', 'x-request-id': 'req-42' };
    assert.equal(statSync(logFile).mode & 0o777, 0o600, 'the log file is created 0600 at start');

    const call = (name: string, id: number, headers: Record<string, string>) =>
      post(thv.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { message: 'hi' } } }, headers);

    const expected: Array<{ type: string; outcome: string; name?: string; status: number }> = [];
    // 1. no token → 401
    let res = await post(thv.url, initializeBody(1));
    assert.equal(res.status, 401);
    await res.text();
    expected.push({ type: 'mcp_initialize', outcome: 'denied', status: 401 });
    // 2. a token that is not valid → 401
    res = await post(thv.url, initializeBody(2), { authorization: 'Bearer not-a-valid-token' });
    assert.equal(res.status, 401);
    await res.text();
    expected.push({ type: 'mcp_initialize', outcome: 'denied', status: 401 });
    // 3. initialize
    res = await post(thv.url, initializeBody(3), auth);
    assert.equal(res.status, 200);
    await res.text();
    const sid = res.headers.get('mcp-session-id')!;
    expected.push({ type: 'mcp_initialize', outcome: 'success', name: 'thv-test', status: 200 });
    const s = { ...auth, 'mcp-session-id': sid };
    // 4. notifications/initialized
    res = await post(thv.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, s);
    assert.equal(res.status, 202);
    await res.text();
    expected.push({ type: 'mcp_request', outcome: 'success', status: 202 });
    // 5. allowed call
    res = await call('echo', 5, s);
    assert.equal(res.status, 200);
    await res.text();
    expected.push({ type: 'mcp_tool_call', outcome: 'success', name: 'echo', status: 200 });
    // 6. forbidden by policy → 403
    res = await call('whoami', 6, s);
    assert.equal(res.status, 403);
    await res.text();
    expected.push({ type: 'mcp_tool_call', outcome: 'denied', name: 'whoami', status: 403 });
    // 7. allowed, but the server answers with a JSON-RPC error → application_error
    res = await call('nosuch', 7, s);
    assert.equal(res.status, 200);
    const msgs = await messagesOf(res);
    assert.ok(msgs.some((m) => m.error !== undefined), 'the server refuses an unknown tool');
    expected.push({ type: 'mcp_tool_call', outcome: 'application_error', name: 'nosuch', status: 200 });
    // 8. unknown session → 404 → failure
    res = await post(thv.url, { jsonrpc: '2.0', id: 8, method: 'tools/list' }, { ...auth, 'mcp-session-id': 'no-such-session' });
    assert.equal(res.status, 404);
    await res.text();
    expected.push({ type: 'mcp_tools_list', outcome: 'failure', status: 404 });

    let lines = await waitForLines([logFile], expected.length);
    // Give a stray extra line the chance to show up before counting.
    await new Promise((r) => setTimeout(r, 200));
    lines = readLines(logFile);
    assert.equal(lines.length, expected.length, `one event per request:\n${lines.map((l) => `${l.type} ${l.outcome}`).join('\n')}`);
    const raw = readFileSync(logFile, 'utf8');
    assert.ok(!raw.includes(token), 'the token never appears in the log');
    assert.ok(!raw.includes('not-a-valid-token'), 'nor does a rejected token');
    assert.equal(new Set(lines.map((l) => l.audit_id)).size, lines.length, 'audit ids are unique');

    for (const [i, want] of expected.entries()) {
      const got = lines[i]!;
      const where = `event ${i + 1} (${want.type} ${want.outcome})`;
      assert.equal(got.msg, 'audit_event', where);
      assert.equal(got.level, 'AUDIT', where);
      assert.equal(got.type, want.type, where);
      assert.equal(got.outcome, want.outcome, where);
      assert.equal(got.component, 'audit-test', where);
      assert.equal(got.source.type, 'network', where);
      assert.equal(got.source.value, '127.0.0.1', where);
      assert.equal(got.target.endpoint, '/mcp', where);
      if (want.name !== undefined) assert.equal(got.target.name, want.name, where);
      assert.equal(typeof got.metadata.extra.duration_ms, 'number', where);
      assert.equal(got.metadata.extra.transport, 'http', where);
      assert.match(got.logged_at, /Z$/, where);
      if (want.status === 401) assert.equal(got.subjects.user, 'anonymous', where);
      else {
        assert.equal(got.subjects.user_id, 'alice', where);
        assert.equal(got.subjects.user, 'Alice', where);
      }
    }
    const ok = lines[4]!;
    assert.equal(ok.target.type, 'tool');
    assert.equal(ok.target.method, 'tools/call');
    assert.equal(ok.source.extra?.user_agent, 'audit-test/1.0');
    assert.equal(ok.source.extra?.request_id, 'req-42');
    assert.deepEqual((ok.data?.request as { params?: unknown }).params, { name: 'echo', arguments: { message: 'hi' } });
    const appErr = lines[6]!;
    assert.equal(typeof appErr.metadata.extra.jsonrpc_error_code, 'number');
    assert.equal(typeof appErr.metadata.extra.jsonrpc_error_message, 'string');

    // Rotation by rename: the proxy notices (file notification, or its 1 s check) and reopens the path.
    // Until it has, events land in the renamed file; none is lost or duplicated.
    const rotated = `${logFile}.1`;
    renameSync(logFile, rotated);
    let sent = expected.length;
    let id = 100;
    // `counted`: whether every event stays readable (rename); after a removal, events written before
    // the proxy notices go to the deleted file, so only a short wait per call is possible.
    const callUntilNewFile = async (counted: boolean): Promise<void> => {
      const deadline = Date.now() + 10_000;
      while (readLines(logFile).length === 0 && Date.now() < deadline) {
        const r = await call('echo', id++, s);
        assert.equal(r.status, 200);
        await r.text();
        sent++;
        await waitForLines(counted ? [logFile, rotated] : [logFile], counted ? sent : 1, counted ? 10_000 : 300);
      }
    };
    await callUntilNewFile(true);
    let fresh = readLines(logFile);
    assert.ok(fresh.length >= 1, 'events after a rename land in a new file');
    assert.equal(fresh.at(-1)!.type, 'mcp_tool_call');
    assert.equal(readLines(rotated).length + fresh.length, sent, 'one event per request across the rotation');
    assert.equal(statSync(logFile).mode & 0o777, 0o600);

    // Rotation by removal.
    const kept = readLines(rotated).length;
    rmSync(logFile);
    await callUntilNewFile(false);
    assert.equal(readLines(rotated).length, kept, 'the rotated file is left alone');
    fresh = readLines(logFile);
    assert.ok(fresh.length >= 1, 'events after a removal land in a recreated file');

    // A crashing server → 5xx → error (last, since it ends the session's server process).
    res = await call('crash', 11, s);
    const status = res.status;
    await res.text();
    const before = fresh.length;
    fresh = await waitForLines([logFile], before + 1);
    assert.equal(fresh.length, before + 1);
    const crash = fresh.at(-1)!;
    assert.equal(crash.type, 'mcp_tool_call');
    assert.equal(crash.outcome, status >= 500 ? 'error' : status === 200 ? 'application_error' : 'failure', `crash answered ${status}`);
  });
});
