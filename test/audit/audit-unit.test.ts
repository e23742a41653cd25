import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditsType, parseAuditConfig } from '../../src/telemetry/audit-config.js';
import {
  auditDelegation,
  auditEventType,
  auditOutcome,
  auditSourceJson,
  auditSubjects,
  auditSubjectsJson,
  jsonRpcErrorOf,
  renderAuditLine,
} from '../../src/telemetry/audit-event.js';
import { FileAuditSink } from '../../src/telemetry/audit-sink.js';
import { createLogger } from '../../src/logging.js';
import { isThvError } from '../../src/errors.js';

describe('audit configuration', () => {
  it('takes ToolHive defaults', () => {
    const s = parseAuditConfig({});
    assert.equal(s.enabled, true);
    assert.equal(s.maxDataSize, 1024);
    assert.equal(s.detectApplicationErrors, true);
    assert.equal(s.includeRequestData, false);
    assert.equal(s.logFile, undefined);
    assert.equal(parseAuditConfig({ maxDataSize: 0 }).maxDataSize, 1024);
  });
  it('refuses unknown event types and bad values', () => {
    assert.throws(() => parseAuditConfig({ eventTypes: ['mcp_nonsense'] }), (e) => isThvError(e) && /mcp_nonsense/.test(e.message));
    assert.throws(() => parseAuditConfig({ excludeEventTypes: ['x'] }), (e) => isThvError(e));
    assert.throws(() => parseAuditConfig({ maxDataSize: -1 }), (e) => isThvError(e));
    assert.throws(() => parseAuditConfig([]), (e) => isThvError(e));
  });
  it('exclusions win over the allow-list', () => {
    const s = parseAuditConfig({ eventTypes: ['mcp_tool_call', 'mcp_ping'], excludeEventTypes: ['mcp_ping'] });
    assert.equal(auditsType(s, 'mcp_tool_call'), true);
    assert.equal(auditsType(s, 'mcp_ping'), false);
    assert.equal(auditsType(s, 'mcp_initialize'), false);
    assert.equal(auditsType(parseAuditConfig({}), 'http_request'), true);
  });
});

describe('audit events', () => {
  it('maps methods to event types', () => {
    assert.equal(auditEventType('tools/call', 'POST', false), 'mcp_tool_call');
    assert.equal(auditEventType('notifications/roots/list_changed', 'POST', false), 'mcp_roots_list_changed');
    assert.equal(auditEventType('sampling/createMessage', 'POST', false), 'mcp_request');
    assert.equal(auditEventType(undefined, 'GET', true), 'sse_connection');
    assert.equal(auditEventType(undefined, 'POST', true), 'mcp_request');
    assert.equal(auditEventType(undefined, 'DELETE', false), 'http_request');
  });
  it('maps statuses to outcomes', () => {
    assert.deepEqual([200, 202, 401, 403, 404, 400, 500, 502].map(auditOutcome), ['success', 'success', 'denied', 'denied', 'failure', 'failure', 'error', 'error']);
  });
  it('recognises JSON-RPC errors in an answer', () => {
    assert.deepEqual(jsonRpcErrorOf('{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"nope"}}'), { code: -32602, message: 'nope' });
    assert.equal(jsonRpcErrorOf('{"jsonrpc":"2.0","id":1,"result":{}}'), undefined);
    assert.equal(jsonRpcErrorOf('event: message\ndata: {}'), undefined);
  });
  it('names the subject, never with the token', () => {
    const s = auditSubjects({ subject: 'u1', claims: { sub: 'u1', preferred_username: 'bob', client_name: 'cli' }, token: 'secret-token' });
    assert.deepEqual(s, { user_id: 'u1', user: 'bob', client_name: 'cli' });
    assert.deepEqual(auditSubjects(undefined), { user: 'anonymous' });
  });
  it('renders the same bytes as JSON.stringify of the event object', () => {
    const now = new Date('2026-01-02T03:04:05.678Z');
    const identity = { subject: 'u"1', claims: { sub: 'u"1', name: 'Zoë \\ \u2028', act: { sub: 'svc' } }, token: 't' };
    const cases: Array<{
      ip: string;
      sourceExtra: Record<string, string>;
      identity: typeof identity | undefined;
      delegation: Record<string, unknown> | undefined;
      target: Record<string, string>;
      extra: Record<string, unknown>;
      data: Record<string, unknown> | undefined;
    }> = [
      { ip: '127.0.0.1', sourceExtra: {}, identity: undefined, delegation: undefined, target: { endpoint: '/mcp', method: 'tools/call', type: 'tool', name: 'echo' }, extra: { duration_ms: 3, transport: 'http' }, data: undefined },
      {
        ip: '::1',
        sourceExtra: { user_agent: 'ua "quoted"\n', request_id: 'r-1' },
        identity,
        delegation: auditDelegation(identity.claims, 10),
        target: { endpoint: '/sse', method: 'GET', type: 'sse_endpoint' },
        extra: { duration_ms: 0, transport: 'sse', jsonrpc_error_code: -32602, jsonrpc_error_message: 'bad\u0000', user_agent: 'x' },
        data: { request: { a: [1, 'two'] }, response: 'text' },
      },
    ];
    for (const c of cases) {
      const line = renderAuditLine(
        {
          type: 'mcp_tool_call',
          outcome: 'success',
          component: JSON.stringify('comp "x"'),
          source: auditSourceJson(c.ip, c.sourceExtra),
          subjects: auditSubjectsJson(c.identity),
          delegation: c.delegation === undefined ? undefined : JSON.stringify(c.delegation),
          target: JSON.stringify(c.target),
          extra: JSON.stringify(c.extra),
          data: c.data === undefined ? undefined : JSON.stringify(c.data),
        },
        now,
      );
      const parsed = JSON.parse(line) as Record<string, unknown>;
      const expected = {
        time: now.toISOString(),
        level: 'AUDIT',
        msg: 'audit_event',
        audit_id: parsed.audit_id,
        type: 'mcp_tool_call',
        logged_at: now.toISOString(),
        outcome: 'success',
        component: 'comp "x"',
        source: { type: 'network', value: c.ip, extra: c.sourceExtra },
        subjects: auditSubjects(c.identity),
        ...(c.delegation === undefined ? {} : { delegation: c.delegation }),
        target: c.target,
        metadata: { extra: c.extra },
        ...(c.data === undefined ? {} : { data: c.data }),
      };
      assert.equal(line, JSON.stringify(expected));
      assert.match(String(parsed.audit_id), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });
  it('reads the delegation chain, bounded', () => {
    const claims = { sub: 'u', act: { sub: 'svc1', act: { sub: 'svc2', act: { sub: 'svc3' } } } };
    assert.deepEqual(auditDelegation(claims, 10), { chain: [{ sub: 'svc1' }, { sub: 'svc2' }, { sub: 'svc3' }] });
    assert.deepEqual(auditDelegation(claims, 2), { chain: [{ sub: 'svc1' }, { sub: 'svc2' }], truncated: true, omitted: 1 });
    assert.equal(auditDelegation({ sub: 'u' }, 10), undefined);
  });
});

describe('audit file sink', () => {
  it('batches writes and reopens after rename and removal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'thv-audit-sink-'));
    try {
      const path = join(dir, 'a.log');
      const sink = new FileAuditSink(path, createLogger());
      sink.open();
      for (let i = 0; i < 1000; i++) sink.write(`{"n":${i}}`);
      await sink.flush();
      assert.equal(readFileSync(path, 'utf8').split('\n').filter(Boolean).length, 1000);
      // Rotation is noticed asynchronously (file notification, or the 1 s check): lines written before
      // that land in the renamed file, none is lost, and later ones go to the new file.
      const lines = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean) : []);
      renameSync(path, `${path}.1`);
      let n = 0;
      for (const deadline = Date.now() + 5000; lines(path).length === 0 && Date.now() < deadline; ) {
        sink.write(`{"n":"after-rename-${n++}"}`);
        await sink.flush();
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(lines(path).length > 0, 'lines reach a new file at the path after a rename');
      assert.equal(lines(path).length + lines(`${path}.1`).length, 1000 + n, 'no line is lost');
      rmSync(path);
      const before = lines(`${path}.1`).length;
      let m = 0;
      for (const deadline = Date.now() + 5000; lines(path).length === 0 && Date.now() < deadline; ) {
        sink.write(`{"n":"after-remove-${m++}"}`);
        await sink.flush();
        await new Promise((r) => setTimeout(r, 20));
      }
      await sink.close();
      assert.ok(lines(path).length > 0, 'lines reach a recreated file after a removal');
      assert.equal(lines(`${path}.1`).length, before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('fails at start on a path it cannot open', () => {
    const sink = new FileAuditSink('/nonexistent-dir/for/audit.log', createLogger());
    assert.throws(() => sink.open());
  });
});
