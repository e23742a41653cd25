import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ECHO_SERVER, messagesOf, openSession, post, startThv } from '../helpers/thv.js';

const SESSIONS = 50;
const REQUESTS_PER_SESSION = 4;

type Msg = Record<string, unknown> & { params?: Record<string, unknown> };

/**
 * Every session uses the same JSON-RPC ids (1..N) and the same progress tokens at the same time; each
 * must get exactly its own answers and notifications.
 */
async function exerciseSession(url: string, index: number, expectLogs: 'own' | 'own-or-none'): Promise<void> {
  const sid = await openSession(url);
  const h = { 'mcp-session-id': sid };
  const calls = Array.from({ length: REQUESTS_PER_SESSION }, async (_, k) => {
    const id = k + 1;
    const message = `s${index}-r${id}`;
    const res = await post(url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message }, _meta: { progressToken: `tok-${id}` } } }, h);
    assert.equal(res.status, 200);
    const msgs = (await messagesOf(res)) as Msg[];
    const progress = msgs.filter((m) => m.method === 'notifications/progress');
    const final = msgs.filter((m) => m.id !== undefined);
    assert.equal(final.length, 1, `session ${index} request ${id}: one answer`);
    assert.equal(final[0]!.id, id);
    assert.deepEqual(final[0]!.result, { content: [{ type: 'text', text: message }] });
    assert.equal(progress.length, 2, `session ${index} request ${id}: its two progress notifications`);
    for (const p of progress) {
      assert.equal(p.params!.progressToken, `tok-${id}`);
      assert.equal(p.params!.message, message);
    }
  });
  const log = (async () => {
    const res = await post(url, { jsonrpc: '2.0', id: 100, method: 'tools/call', params: { name: 'log', arguments: { message: `log-${index}` } } }, h);
    assert.equal(res.status, 200);
    const msgs = (await messagesOf(res)) as Msg[];
    const logs = msgs.filter((m) => m.method === 'notifications/message');
    for (const l of logs) assert.equal(l.params!.data, `log-${index}`, 'never another session\'s log');
    if (expectLogs === 'own') assert.equal(logs.length, 1, `session ${index} gets its log message`);
    assert.equal(msgs.filter((m) => m.id === 100).length, 1);
  })();
  await Promise.all([...calls, log]);
  const del = await fetch(url, { method: 'DELETE', headers: h });
  assert.equal(del.status, 204);
}

describe('isolation under concurrency', () => {
  it(`${SESSIONS} concurrent sessions, one server process each (default)`, async () => {
    const thv = await startThv(['run', '--runtime', 'process', '--foreground', '--max-sessions', '200', ECHO_SERVER]);
    try {
      const pids = new Set<string>();
      await Promise.all(
        Array.from({ length: SESSIONS }, async (_, i) => {
          await exerciseSession(thv.url, i, 'own');
        }),
      );
      // Distinct processes: ask a few sessions who they are.
      for (let i = 0; i < 3; i++) {
        const sid = await openSession(thv.url);
        const res = await post(thv.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami' } }, { 'mcp-session-id': sid, accept: 'application/json' });
        const body = (await res.json()) as { result: { content: Array<{ text: string }> } };
        pids.add(body.result.content[0]!.text);
      }
      assert.equal(pids.size, 3);
    } finally {
      assert.equal(await thv.stop(), 0);
    }
  });

  it(`${SESSIONS} concurrent sessions sharing one server process (--stdio-sessions shared)`, async () => {
    const thv = await startThv(['run', '--runtime', 'process', '--foreground', '--stdio-sessions', 'shared', '--max-sessions', '200', ECHO_SERVER]);
    try {
      await Promise.all(Array.from({ length: SESSIONS }, (_, i) => exerciseSession(thv.url, i, 'own-or-none')));
    } finally {
      assert.equal(await thv.stop(), 0);
    }
  });
});
