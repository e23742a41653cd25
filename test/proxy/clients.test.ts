import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { startThv } from '../helpers/thv.js';

const EVERYTHING = 'npx://@modelcontextprotocol/server-everything';

async function listAndCall(transport: Transport): Promise<void> {
  const client = new Client({ name: 'thv-test-client', version: '1.0.0' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    assert.ok(names.includes('echo'), `tools: ${names.join(', ')}`);
    assert.ok(names.includes('get-sum'));
    const echo = await client.callTool({ name: 'echo', arguments: { message: 'through thv' } });
    assert.deepEqual(echo.content, [{ type: 'text', text: 'Echo: through thv' }]);
    const sum = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
    assert.match(JSON.stringify(sum.content), /42/);
  } finally {
    await client.close();
  }
}

describe('real MCP clients through thv, in front of server-everything run as npx://', () => {
  it('SDK client over Streamable HTTP lists and calls tools', async () => {
    const thv = await startThv(['run', '--runtime', 'process', '--foreground', EVERYTHING], { timeoutMs: 120_000 });
    try {
      assert.match(thv.url, /\/mcp$/);
      await listAndCall(new StreamableHTTPClientTransport(new URL(thv.url)));
    } finally {
      assert.equal(await thv.stop(), 0);
    }
  });

  it('SDK client over legacy SSE (--proxy-mode sse) lists and calls tools', async () => {
    const thv = await startThv(['run', '--runtime', 'process', '--foreground', '--proxy-mode', 'sse', EVERYTHING], { timeoutMs: 120_000 });
    try {
      assert.match(thv.url, /\/sse#modelcontextprotocol-server-everything$/);
      assert.match(thv.stderr(), /deprecated/i);
      await listAndCall(new SSEClientTransport(new URL(thv.url)));
    } finally {
      assert.equal(await thv.stop(), 0);
    }
  });
});
