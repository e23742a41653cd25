/**
 * Bad input on the other two front doors: the transparent proxy in front of a Streamable HTTP server,
 * and the legacy SSE `/messages` endpoint of the stdio bridge. The same documented statuses and JSON-RPC
 * errors as the stdio bridge's /mcp (test/proxy/bad-input.test.ts); the proxy stays up, and an HTTP server
 * that dies is reported with 502, not hung on.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ECHO_SERVER, expectRpcError, openSession, post, startThv, type RunningThv } from '../helpers/thv.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/conformance-server.ts', import.meta.url));
const LAUNCHER = fileURLToPath(new URL('../fixtures/conformance-server.sh', import.meta.url));

/** The server process thv started (its direct child; thv starts it in a process group of its own). */
function serverPid(thvPid: number): number {
  const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(thvPid)], { encoding: 'utf8' });
  const pids = out.split('\n').map((s) => Number(s.trim())).filter((n) => n > 0);
  assert.equal(pids.length, 1, `thv has one child, the server: ${out}`);
  return pids[0]!;
}

describe('bad input through the transparent proxy (Streamable HTTP server)', () => {
  let thv: RunningThv;
  let sid: string;
  before(async () => {
    thv = await startThv(['run', '--runtime', 'process', '--foreground', '--transport', 'streamable-http', LAUNCHER, '--', FIXTURE, '--http']);
    sid = await openSession(thv.url);
  });
  after(async () => {
    assert.equal(await thv.stop(), 0);
  });

  it('malformed JSON → 400 -32700; not JSON-RPC → 400 -32600; a batch → 400 -32600', async () => {
    await expectRpcError(await post(thv.url, '{"jsonrpc":"2.0", "id": 1, ', { 'mcp-session-id': sid }), 400, -32700);
    const body = await expectRpcError(await post(thv.url, { id: 3, method: 'ping' }, { 'mcp-session-id': sid }), 400, -32600);
    assert.equal(body.id, 3);
    const batch = await expectRpcError(await post(thv.url, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-session-id': sid }), 400, -32600);
    assert.match(batch.error.message, /batch/);
  });

  it('wrong content type → 415; oversized body → 413', async () => {
    await expectRpcError(await post(thv.url, '{}', { 'content-type': 'text/plain', 'mcp-session-id': sid }), 415, -32600);
    await expectRpcError(await post(thv.url, 'x'.repeat(8 * 1024 * 1024 + 10), { 'mcp-session-id': sid }), 413, -32600);
  });

  it('an unknown session id → 404 -32001, id echoed', async () => {
    const body = await expectRpcError(await post(thv.url, { jsonrpc: '2.0', id: 9, method: 'ping' }, { 'mcp-session-id': 'no-such-session' }), 404, -32001);
    assert.equal(body.id, 9);
  });

  it('the session still works after all of it', async () => {
    const res = await post(thv.url, { jsonrpc: '2.0', id: 'ok', method: 'tools/list' }, { 'mcp-session-id': sid });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /test_simple_text/);
  });

  it('a server that dies: the next request gets 502 with a JSON-RPC error at once, and the proxy stays up', async () => {
    const pid = serverPid(thv.child.pid!);
    process.kill(-pid, 'SIGKILL');
    // Once the process is gone, the port no longer answers.
    const deadline = Date.now() + 10_000;
    let res: Response;
    for (;;) {
      const started = Date.now();
      res = await post(thv.url, { jsonrpc: '2.0', id: 'dead', method: 'tools/list' }, { 'mcp-session-id': sid });
      assert.ok(Date.now() - started < 5000, 'answered promptly, not after a timeout');
      if (res.status !== 200) break;
      await res.text();
      assert.ok(Date.now() < deadline, 'the killed server kept answering');
    }
    const body = await expectRpcError(res, 502, -32000);
    assert.equal(body.id, 'dead');
    const health = await fetch(`${thv.base}/health`);
    assert.ok([200, 503].includes(health.status));
    await health.text();
  });
});

describe('bad input on the legacy SSE /messages endpoint (stdio bridge, --proxy-mode sse)', () => {
  let thv: RunningThv;
  let base: string;
  let sessionId: string;
  let stream: AbortController;
  before(async () => {
    thv = await startThv(['run', '--runtime', 'process', '--foreground', '--proxy-mode', 'sse', ECHO_SERVER]);
    base = thv.base;
    stream = new AbortController();
    const res = await fetch(`${base}/sse`, { headers: { accept: 'text/event-stream' }, signal: stream.signal });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    let text = '';
    while (!/session_id=([\w-]+)/.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the SSE stream ended before the endpoint event: ${text}`);
      text += new TextDecoder().decode(value);
    }
    sessionId = /session_id=([\w-]+)/.exec(text)![1]!;
  });
  after(async () => {
    stream.abort();
    assert.equal(await thv.stop(), 0);
  });

  const messages = (q: string) => `${base}/messages${q}`;

  it('malformed JSON → 400 -32700; a batch → 400 -32600; wrong content type → 415', async () => {
    await expectRpcError(await post(messages(`?session_id=${sessionId}`), '{"jsonrpc": '), 400, -32700);
    await expectRpcError(await post(messages(`?session_id=${sessionId}`), [{ jsonrpc: '2.0', id: 1, method: 'ping' }]), 400, -32600);
    await expectRpcError(await post(messages(`?session_id=${sessionId}`), '{}', { 'content-type': 'text/plain' }), 415, -32600);
  });

  it('oversized body → 413; unknown session → 404 -32001; no session_id → 400', async () => {
    await expectRpcError(await post(messages(`?session_id=${sessionId}`), 'x'.repeat(8 * 1024 * 1024 + 10)), 413, -32600);
    await expectRpcError(await post(messages('?session_id=nope'), { jsonrpc: '2.0', id: 4, method: 'ping' }), 404, -32001);
    const missing = await post(messages(''), { jsonrpc: '2.0', id: 5, method: 'ping' });
    assert.equal(missing.status, 400);
    assert.match(await missing.text(), /session_id is required/);
  });

  it('a good message is still accepted afterwards', async () => {
    const res = await post(messages(`?session_id=${sessionId}`), { jsonrpc: '2.0', id: 6, method: 'ping' });
    assert.equal(res.status, 202);
    await res.text();
  });
});
