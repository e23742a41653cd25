import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { ECHO_SERVER, expectRpcError, openSession, post, runThv, startThv, type RunningThv } from '../helpers/thv.js';

describe('bad input gets the documented status and JSON-RPC error, and the proxy stays up', () => {
  let thv: RunningThv;
  let sid: string;
  before(async () => {
    thv = await startThv(['run', '--runtime', 'process', '--foreground', ECHO_SERVER], { env: { ECHO_SERVER_BANNER: '1' } });
    sid = await openSession(thv.url);
  });
  after(async () => {
    assert.equal(await thv.stop(), 0);
  });

  it('malformed JSON → 400 parse error (-32700)', async () => {
    await expectRpcError(await post(thv.url, '{"jsonrpc":"2.0", "id": 1, "method": ', { 'mcp-session-id': sid }), 400, -32700);
  });

  it('not JSON-RPC 2.0 → 400 invalid request (-32600), id echoed', async () => {
    const body = await expectRpcError(await post(thv.url, { id: 3, method: 'ping' }, { 'mcp-session-id': sid }), 400, -32600);
    assert.equal(body.id, 3);
    await expectRpcError(await post(thv.url, '"just a string"', { 'mcp-session-id': sid }), 400, -32600);
    await expectRpcError(await post(thv.url, { jsonrpc: '2.0', id: { nested: true }, method: 'ping' }, { 'mcp-session-id': sid }), 400, -32600);
  });

  it('wrong content types → 415', async () => {
    await expectRpcError(await post(thv.url, '{}', { 'content-type': 'text/plain', 'mcp-session-id': sid }), 415, -32600);
    const none = await fetch(thv.url, { method: 'POST', body: new Blob(['{}']), headers: { accept: 'application/json', 'mcp-session-id': sid } });
    await expectRpcError(none, 415, -32600);
  });

  it('a batch → 400 -32600 without id', async () => {
    const body = await expectRpcError(await post(thv.url, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-session-id': sid }), 400, -32600);
    assert.equal('id' in body, false);
    assert.match(body.error.message, /batch/);
  });

  it('an oversized body (declared) → 413 before reading it', async () => {
    const big = 'x'.repeat(8 * 1024 * 1024 + 10);
    await expectRpcError(await post(thv.url, big, { 'mcp-session-id': sid }), 413, -32600);
  });

  it('an oversized body (chunked, no Content-Length) → 413', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(thv.url);
      const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'mcp-session-id': sid } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', (e) => (/(EPIPE|ECONNRESET)/.test(String(e)) ? undefined : reject(e)));
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      for (let i = 0; i < 9; i++) req.write(chunk);
      req.end();
    });
    assert.equal(status, 413);
  });

  it('unknown session ids → 404 -32001', async () => {
    const body = await expectRpcError(await post(thv.url, { jsonrpc: '2.0', id: 9, method: 'ping' }, { 'mcp-session-id': 'f00' }), 404, -32001);
    assert.equal(body.id, 9);
  });

  it('garbage on the server stdout is ignored; answers still arrive', async () => {
    const res = await post(thv.url, { jsonrpc: '2.0', id: 'g', method: 'tools/call', params: { name: 'garbage' } }, { 'mcp-session-id': sid, accept: 'application/json' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: 'g', result: { content: [{ type: 'text', text: 'after garbage' }] } });
  });

  it('a server that exits mid-request: 502 with the reason at once; the session ends; a new one works', async () => {
    const own = await openSession(thv.url);
    const started = Date.now();
    const res = await post(thv.url, { jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'crash', arguments: { code: 7 } } }, { 'mcp-session-id': own, accept: 'application/json' });
    const body = await expectRpcError(res, 502, -32000);
    assert.equal(body.id, 'c');
    assert.match(body.error.message, /exited with code 7/);
    assert.ok(Date.now() - started < 5000, 'reported promptly, not after a timeout');

    const health = (await (await fetch(`${thv.base}/health`)).json()) as { status: string; mcp: { error?: string } };
    assert.equal(health.status, 'unhealthy');
    assert.match(health.mcp.error ?? '', /exited with code 7/);

    await expectRpcError(await post(thv.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': own }), 404, -32001);
    const fresh = await openSession(thv.url);
    const ok = await post(thv.url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': fresh, accept: 'application/json' });
    assert.equal(ok.status, 200);
    await ok.text();
    const healed = (await (await fetch(`${thv.base}/health`)).json()) as { status: string };
    assert.equal(healed.status, 'healthy');
  });

  it('the proxy is still up after all of it', async () => {
    const res = await post(thv.url, { jsonrpc: '2.0', id: 'last', method: 'tools/list' }, { 'mcp-session-id': sid, accept: 'application/json' });
    assert.equal(res.status, 200);
    await res.text();
  });
});

describe('servers that cannot start are reported, not hung on', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'thv-bad-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a missing executable stops thv run with a clear error', async () => {
    const r = await runThv(['run', '--runtime', 'process', '--foreground', join(dir, 'nope')]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /no such file/);
  });

  it('a file that is not executable stops thv run with a hint', async () => {
    const f = join(dir, 'server.sh');
    writeFileSync(f, '#!/bin/sh\nexit 0\n');
    const r = await runThv(['run', '--runtime', 'process', '--foreground', f]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /not executable/);
    assert.match(r.stderr, /chmod \+x/);
  });

  it('a server that dies at start: initialize gets 502 with its last words', async () => {
    const f = join(dir, 'dies.sh');
    writeFileSync(f, '#!/bin/sh\necho "cannot open database: permission denied" >&2\nexit 4\n');
    chmodSync(f, 0o755);
    const thv = await startThv(['run', '--runtime', 'process', '--foreground', f]);
    try {
      const res = await post(thv.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }, { accept: 'application/json' });
      const body = await expectRpcError(res, 502, -32000);
      assert.match(body.error.message, /exited with code 4.*permission denied/);
    } finally {
      assert.equal(await thv.stop(), 0);
    }
  });
});
