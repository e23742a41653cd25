import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ECHO_SERVER, openSession, post, startThv, type RunningThv } from '../helpers/thv.js';

describe('--tools and --tools-override through thv run', () => {
  let dir: string;
  let thv: RunningThv;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'thv-tools-'));
    const override = join(dir, 'override.json');
    writeFileSync(override, JSON.stringify({ toolsOverride: { echo: { name: 'say', description: 'Says it back' } } }));
    thv = await startThv(['run', '--runtime', 'process', '--foreground', '--tools', 'say', '--tools', 'whoami', '--tools-override', override, ECHO_SERVER]);
  });
  after(async () => {
    assert.equal(await thv.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('tools/list shows only the allowed tools, renamed', async () => {
    const sid = await openSession(thv.url);
    const res = await post(thv.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': sid, accept: 'application/json' });
    const body = (await res.json()) as { result: { tools: Array<{ name: string; description: string }> } };
    assert.deepEqual(body.result.tools.map((t) => t.name).sort(), ['say', 'whoami']);
    assert.equal(body.result.tools.find((t) => t.name === 'say')!.description, 'Says it back');
  });

  it('a call to the new name reaches the real tool; a hidden tool is "tool not found"', async () => {
    const sid = await openSession(thv.url);
    const h = { 'mcp-session-id': sid, accept: 'application/json' };
    const said = await post(thv.url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'say', arguments: { message: 'renamed' } } }, h);
    assert.deepEqual(await said.json(), { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'renamed' }] } });
    const hidden = await post(thv.url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'crash' } }, h);
    assert.equal(hidden.status, 200);
    assert.deepEqual(await hidden.json(), { jsonrpc: '2.0', id: 3, error: { code: -32602, message: 'tool not found' } });
  });
});
