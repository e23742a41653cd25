import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ECHO_SERVER, openSession, post, startThv, type RunningThv } from '../helpers/thv.js';
import { classifyRevision, MODERN_PROTOCOL_VERSION } from '../../src/transport/revision.js';

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL_VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'modern-client', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

function toolCall(id: number | string, meta?: Record<string, unknown>, tool = 'whoami'): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: { message: 'hi' }, ...(meta ? { _meta: meta } : {}) } };
}

type RpcAnswer = { jsonrpc: string; id?: unknown; result?: { content: Array<{ text: string }> }; error?: { code: number; message: string; data?: Record<string, unknown> } };

describe('revision classification (unit)', () => {
  it('initialize is always legacy, a request without signal is legacy', () => {
    assert.deepEqual(classifyRevision('initialize', { _meta: { 'io.modelcontextprotocol/protocolVersion': 'x' } }, MODERN_PROTOCOL_VERSION), { era: 'legacy' });
    assert.deepEqual(classifyRevision('tools/list', undefined, '2025-06-18'), { era: 'legacy' });
    assert.deepEqual(classifyRevision('tools/list', { _meta: { progressToken: 1 } }, undefined), { era: 'legacy' });
  });

  it('a signalled request is modern, or refused with the draft codes in ToolHive\'s order', () => {
    assert.deepEqual(classifyRevision('tools/list', { _meta: MODERN_META }, undefined), { era: 'modern' });
    assert.deepEqual(classifyRevision('tools/list', { _meta: MODERN_META }, MODERN_PROTOCOL_VERSION), { era: 'modern' });
    const code = (params: Record<string, unknown> | undefined, header?: string): number | undefined => {
      const r = classifyRevision('tools/list', params, header);
      return 'error' in r ? r.error.code : undefined;
    };
    assert.equal(code(undefined, MODERN_PROTOCOL_VERSION), -32602);
    assert.equal(code({ _meta: { 'io.modelcontextprotocol/clientInfo': {} } }), -32602);
    assert.equal(code({ _meta: { ...MODERN_META, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } }), -32022);
    assert.equal(code({ _meta: MODERN_META }, '2025-06-18'), -32020);
    assert.equal(code({ _meta: { ...MODERN_META, 'io.modelcontextprotocol/clientCapabilities': 'all' } }), -32021);
  });
});

describe('stdio bridge: stateless and Modern callers, strict protocol validation', () => {
  let thv: RunningThv;
  before(async () => {
    thv = await startThv(['run', '--runtime', 'process', '--foreground', '--strict-protocol-validation', ECHO_SERVER]);
  });
  after(async () => {
    assert.equal(await thv.stop(), 0);
  });

  it('--strict-protocol-validation refuses an unknown MCP-Protocol-Version with 400, admits known ones', async () => {
    const sid = await openSession(thv.url);
    const bad = await post(thv.url, toolCall(1, undefined, 'echo'), { 'mcp-session-id': sid, 'mcp-protocol-version': '1999-01-01' });
    assert.equal(bad.status, 400);
    assert.equal(await bad.text(), 'Unsupported MCP-Protocol-Version');
    const good = await post(thv.url, toolCall(2, undefined, 'echo'), { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    assert.equal(good.status, 200);
    await good.text();
  });

  it('hostile Modern requests → 400 with the JSON-RPC code and data, id echoed', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, string>, number]> = [
      [toolCall('m-1'), { 'mcp-protocol-version': MODERN_PROTOCOL_VERSION }, -32602],
      [toolCall('m-2', { ...MODERN_META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }), {}, -32022],
      [toolCall('m-3', MODERN_META), { 'mcp-protocol-version': '2025-11-25' }, -32020],
      [toolCall('m-4', { 'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL_VERSION }), {}, -32021],
    ];
    for (const [body, headers, code] of cases) {
      const res = await post(thv.url, body, headers);
      assert.equal(res.status, 400, JSON.stringify(body));
      const answer = (await res.json()) as RpcAnswer;
      assert.equal(answer.error?.code, code);
      assert.equal(answer.id, body.id);
      assert.equal(typeof answer.error?.data, 'object');
    }
  });

  it('a well-formed Modern request without a session is answered, creates no session, ignores a session id', async () => {
    const res = await post(thv.url, toolCall(7, MODERN_META), { 'mcp-session-id': 'not-a-session-anyone-has' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('mcp-session-id'), null);
    const answer = (await res.json()) as RpcAnswer;
    assert.equal(answer.id, 7);
    assert.match(answer.result?.content[0]?.text ?? '', /^\d+$/);
  });

  it('stateless callers share one server process that no session owns; ids may collide safely', async () => {
    const [a, b] = await Promise.all([post(thv.url, toolCall(1)), post(thv.url, toolCall(1))]);
    const [ra, rb] = (await Promise.all([a.json(), b.json()])) as RpcAnswer[];
    assert.equal(ra!.id, 1);
    assert.equal(rb!.id, 1);
    const statelessPid = ra!.result!.content[0]!.text;
    assert.equal(rb!.result!.content[0]!.text, statelessPid);
    const sid = await openSession(thv.url);
    const inSession = (await (await post(thv.url, toolCall(2), { 'mcp-session-id': sid })).json()) as RpcAnswer;
    assert.notEqual(inSession.result!.content[0]!.text, statelessPid);
    // The proxy did the handshake for the stateless process; a client's own initialized is absorbed.
    const note = await post(thv.url, { jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(note.status, 202);
  });
});

describe('transparent proxy: Modern requests, and a server that lost its sessions', () => {
  const FIXTURE = new URL('../fixtures/conformance-server.ts', import.meta.url).pathname;
  const LAUNCHER = new URL('../fixtures/conformance-server.sh', import.meta.url).pathname;
  let thv: RunningThv;
  let targetPort: number;
  before(async () => {
    const { freePort } = await import('../../src/proxy/net.js');
    targetPort = await freePort('127.0.0.1');
    thv = await startThv([
      'run', '--runtime', 'process', '--foreground', '--transport', 'streamable-http', '--target-port', String(targetPort),
      LAUNCHER, '--', FIXTURE, '--http',
    ]);
  });
  after(async () => {
    assert.equal(await thv.stop(), 0);
  });

  it('hostile Modern input → 400 without reaching the server; Modern GET/DELETE → 405', async () => {
    const res = await post(thv.url, toolCall('t-1', { ...MODERN_META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }));
    assert.equal(res.status, 400);
    const answer = (await res.json()) as RpcAnswer;
    assert.equal(answer.error?.code, -32022);
    assert.equal(answer.id, 't-1');
    const get = await fetch(thv.url, { headers: { accept: 'text/event-stream', 'mcp-protocol-version': MODERN_PROTOCOL_VERSION } });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST, OPTIONS');
    assert.match(await get.text(), /stateless MCP revision/);
  });

  it('when the server forgets a session, the proxy initialises it again and the client keeps its id', async () => {
    const sid = await openSession(thv.url);
    const call = (id: number) => post(thv.url, { jsonrpc: '2.0', id, method: 'tools/list', params: {} }, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    const before = await call(10);
    assert.equal(before.status, 200);
    await before.text();
    const forget = await fetch(`http://127.0.0.1:${targetPort}/forget-sessions`, { method: 'POST' });
    assert.equal(forget.status, 204);
    const afterRes = await call(11);
    assert.equal(afterRes.status, 200, await afterRes.clone().text());
    const text = await afterRes.text();
    assert.match(text, /"id":11/);
    assert.match(text, /"tools"/);
    // Still works on the client's original id.
    const again = await call(12);
    assert.equal(again.status, 200);
    await again.text();
  });
});
