import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ECHO_SERVER, initializeBody, messagesOf, openSession, post, startThv, type RunningThv } from '../helpers/thv.js';

// The Streamable HTTP side of the stdio bridge, checked at the protocol level (raw HTTP).
describe('stdio bridge: Streamable HTTP behaviour', () => {
  let thv: RunningThv;
  before(async () => {
    thv = await startThv(['run', '--runtime', 'process', '--foreground', ECHO_SERVER]);
  });
  after(async () => {
    assert.equal(await thv.stop(), 0);
  });

  it('initialize answers 200 JSON with a new Mcp-Session-Id', async () => {
    const res = await post(thv.url, initializeBody('init-1'), { accept: 'application/json' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.ok(res.headers.get('mcp-session-id'));
    const body = (await res.json()) as { id: string; result: { serverInfo: { name: string } } };
    assert.equal(body.id, 'init-1');
    assert.equal(body.result.serverInfo.name, 'echo-server');
  });

  it('a notification gets 202 with an empty body', async () => {
    const sid = await openSession(thv.url);
    const res = await post(thv.url, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, { 'mcp-session-id': sid });
    assert.equal(res.status, 202);
    assert.equal(await res.text(), '');
  });

  it('answers by Accept: JSON by default, SSE when the server streams first', async () => {
    const sid = await openSession(thv.url);
    const plain = await post(thv.url, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { message: 'a' } } }, { 'mcp-session-id': sid });
    assert.match(plain.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(await plain.json(), { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'a' }] } });

    const streamed = await post(
      thv.url,
      { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo', arguments: { message: 'b' }, _meta: { progressToken: 'p1' } } },
      { 'mcp-session-id': sid },
    );
    assert.match(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
    const text = await streamed.text();
    assert.match(text, /^event: message\ndata: /);
    const msgs = (await Promise.resolve(text.split('\n\n').filter(Boolean).map((b) => JSON.parse(b.split('data: ')[1]!)))) as Array<Record<string, unknown>>;
    assert.equal(msgs.length, 3);
    assert.equal(msgs[0]!.method, 'notifications/progress');
    assert.deepEqual((msgs[0]!.params as Record<string, unknown>).progressToken, 'p1');
    assert.equal(msgs[2]!.id, 8);
  });

  it('only SSE accepted: the answer comes as an SSE stream', async () => {
    const sid = await openSession(thv.url);
    const res = await post(thv.url, { jsonrpc: '2.0', id: 'x', method: 'ping' }, { 'mcp-session-id': sid, accept: 'text/event-stream' });
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.deepEqual(await messagesOf(res), [{ jsonrpc: '2.0', id: 'x', result: {} }]);
  });

  it('DELETE with an unknown session: 404, JSON-RPC -32001, no id', async () => {
    const res = await fetch(thv.url, { method: 'DELETE', headers: { 'mcp-session-id': 'no-such-session' } });
    assert.equal(res.status, 404);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    assert.deepEqual(body, { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' } });
  });

  it('a request on a stale session: 404 with the id echoed', async () => {
    const sid = await openSession(thv.url);
    const del = await fetch(thv.url, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    assert.equal(del.status, 204);
    const res = await post(thv.url, { jsonrpc: '2.0', id: 'test-42', method: 'tools/list' }, { 'mcp-session-id': sid });
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: 'test-42', error: { code: -32001, message: 'Session not found' } });
  });

  it('GET opens the session stream; unknown or missing session is refused', async () => {
    const missing = await fetch(thv.url, { headers: { accept: 'text/event-stream' } });
    assert.equal(missing.status, 400);
    await missing.text();
    const unknown = await fetch(thv.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': 'nope' } });
    assert.equal(unknown.status, 404);
    await unknown.text();
    const sid = await openSession(thv.url);
    const ctrl = new AbortController();
    const stream = await fetch(thv.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid }, signal: ctrl.signal });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    ctrl.abort();
  });

  it('other methods get 405; /health answers', async () => {
    const put = await fetch(thv.url, { method: 'PUT', body: '{}' });
    assert.equal(put.status, 405);
    await put.text();
    const health = await fetch(`${thv.base}/health`);
    assert.equal(health.status, 200);
    const h = (await health.json()) as { status: string; transport: string };
    assert.equal(h.status, 'healthy');
    assert.equal(h.transport, 'streamable-http');
  });

  it('a request without a session is served by the session-less process (per-session mode)', async () => {
    // Stateless clients (and the Modern revision) send no Mcp-Session-Id; the proxy initialises a
    // session-less server process on their behalf instead of refusing them (docs/stdio-sessions.md).
    const res = await post(thv.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { id: number; result: { tools: unknown[] } };
    assert.equal(body.id, 1);
    assert.ok(Array.isArray(body.result.tools));
  });

  it('two requests with the same id in flight in one session: the second is refused', async () => {
    const sid = await openSession(thv.url);
    // `ask` makes the server send a sampling request on the POST's stream: once it arrives, request 5 is
    // certainly in flight.
    const first = await post(thv.url, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'ask' } }, { 'mcp-session-id': sid });
    assert.match(first.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = first.body!.getReader();
    let buffered = '';
    while (!buffered.includes('\n\n')) buffered += new TextDecoder().decode((await reader.read()).value);
    const sampling = JSON.parse(buffered.split('data: ')[1]!.split('\n')[0]!) as { id: string; method: string };
    assert.equal(sampling.method, 'sampling/createMessage');

    const dup = await post(thv.url, { jsonrpc: '2.0', id: 5, method: 'ping' }, { 'mcp-session-id': sid, accept: 'application/json' });
    assert.equal(dup.status, 400);
    assert.equal(((await dup.json()) as { id: number }).id, 5);

    const answer = await post(
      thv.url,
      { jsonrpc: '2.0', id: sampling.id, result: { role: 'assistant', content: { type: 'text', text: 'sampled!' }, model: 'm' } },
      { 'mcp-session-id': sid },
    );
    assert.equal(answer.status, 202);
    let rest = buffered;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    assert.match(rest, /"id":5,"result":\{"content":\[\{"type":"text","text":"sampled!"\}\]\}/);
  });
});
