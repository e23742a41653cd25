import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toolFilter, type ToolFilterOptions } from '../../src/middleware/tool-filter.js';
import type { JsonRpcMessage } from '../../src/transport/jsonrpc.js';
import type { NamedMiddleware } from '../../src/middleware/types.js';
import { CANNED_TOOLS, deepFreeze, startHarness, type Harness, type Responder } from '../helpers/middleware-harness.js';

const call = (name: unknown, id: number | string = 7, extra: Record<string, unknown> = {}): JsonRpcMessage =>
  ({ jsonrpc: '2.0', id, method: 'tools/call', params: name === undefined ? {} : { name, arguments: { url: 'https://example.com' }, ...extra } }) as JsonRpcMessage;
const list = (id: number | string = 1): JsonRpcMessage => ({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });

type ToolShape = { name: string; description?: string; [k: string]: unknown };
const toolsOf = (m: JsonRpcMessage | undefined): ToolShape[] => (m?.result as { tools: ToolShape[] }).tools;

/** Starts a harness per options set; closes them all at the end. */
function withHarness(options: ToolFilterOptions, respond?: Responder): () => Harness {
  let h: Harness | undefined;
  before(async () => {
    h = await startHarness([toolFilter(options)], respond);
  });
  after(async () => {
    await h?.close();
  });
  return () => h!;
}

describe('toolFilter: construction', () => {
  it('returns undefined when there is nothing to filter or rename', () => {
    assert.equal(toolFilter({}), undefined);
    assert.equal(toolFilter({ filterTools: [], toolsOverride: {} }), undefined);
  });
  it('returns a stage named tool-filter otherwise', () => {
    assert.equal(toolFilter({ filterTools: ['fetch'] })?.name, 'tool-filter');
    assert.equal(toolFilter({ toolsOverride: { fetch: { description: 'd' } } })?.name, 'tool-filter');
  });
  it('rejects the entries ToolHive rejects', () => {
    assert.throws(() => toolFilter({ filterTools: [''] }), /tool name cannot be empty/);
    assert.throws(() => toolFilter({ toolsOverride: { '': { name: 'x' } } }), /tool name cannot be empty/);
    assert.throws(() => toolFilter({ toolsOverride: { fetch: {} } }), /cannot both be empty/);
    assert.throws(() => toolFilter({ toolsOverride: { fetch: { name: '', description: '' } } }), /cannot both be empty/);
  });
});

describe('toolFilter: filter only (--tools fetch --tools echo)', () => {
  const h = withHarness({ filterTools: ['fetch', 'echo'] });

  it('tools/list keeps only the listed tools, every field intact, other result members intact', async () => {
    const r = await h().rpc(list());
    assert.equal(r.status, 200);
    const msg = r.json as JsonRpcMessage;
    assert.equal(msg.id, 1);
    assert.deepEqual(toolsOf(msg), [CANNED_TOOLS[0], CANNED_TOOLS[1]]);
    assert.equal((msg.result as { nextCursor: string }).nextCursor, 'c2');
  });

  it('tools/call of a listed tool is forwarded byte-for-byte (no re-encoding)', async () => {
    const before = h().forwarded.length;
    const r = await h().rpc(call('fetch'));
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'called fetch' }] } });
    const f = h().forwarded[before]!;
    assert.equal(f.changed, false);
    assert.deepEqual(f.message, call('fetch'));
  });

  it('quirk 13: tools/call of a filtered tool answers 200 + JSON-RPC -32602 "tool not found", not forwarded', async () => {
    const before = h().forwarded.length;
    const r = await h().rpc(call('add', 'abc'));
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.equal(r.text, '{"jsonrpc":"2.0","error":{"code":-32602,"message":"tool not found"},"id":"abc"}');
    assert.equal(h().forwarded.length, before);
  });

  for (const accept of [undefined, 'application/json', 'application/*', '*/*', 'text/event-stream, application/json', 'APPLICATION/JSON;q=0.9']) {
    it(`"tool not found" is 200 when the client accepts JSON (Accept: ${accept ?? 'none'})`, async () => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (accept !== undefined) headers.accept = accept;
      const r = await h().request({ method: 'POST', body: call('add'), headers });
      assert.equal(r.status, 200);
      assert.deepEqual(r.json, { jsonrpc: '2.0', error: { code: -32602, message: 'tool not found' }, id: 7 });
    });
  }

  for (const accept of ['text/event-stream', 'text/html', 'application/xml']) {
    it(`"tool not found" is 400 with the same body when the client does not accept JSON (Accept: ${accept})`, async () => {
      const r = await h().request({ method: 'POST', body: call('add'), headers: { 'content-type': 'application/json', accept } });
      assert.equal(r.status, 400);
      assert.deepEqual(r.json, { jsonrpc: '2.0', error: { code: -32602, message: 'tool not found' }, id: 7 });
    });
  }

  it('the filter is case-sensitive', async () => {
    const r = await h().rpc(call('Fetch'));
    assert.deepEqual((r.json as JsonRpcMessage).error, { code: -32602, message: 'tool not found' });
  });

  for (const [label, params] of [
    ['no params', undefined],
    ['empty params', {}],
    ['empty name', { name: '' }],
    ['non-string name', { name: 42 }],
    ['array params', ['fetch']],
  ] as const) {
    it(`tools/call with ${label} answers 400 with a JSON-RPC body (ToolHive: empty body)`, async () => {
      const before = h().forwarded.length;
      const msg: Record<string, unknown> = { jsonrpc: '2.0', id: 9, method: 'tools/call' };
      if (params !== undefined) msg.params = params;
      const r = await h().rpc(msg);
      assert.equal(r.status, 400);
      assert.deepEqual(r.json, { jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params: tool name is required' }, id: 9 });
      assert.equal(h().forwarded.length, before);
    });
  }

  it('other methods pass untouched and register no transform', async () => {
    const before = h().forwarded.length;
    const msg = { jsonrpc: '2.0', id: 3, method: 'prompts/get', params: { name: 'add' } };
    const r = await h().rpc(msg);
    assert.equal(r.status, 200);
    assert.deepEqual((r.json as JsonRpcMessage).result, { echo: msg });
    assert.equal(h().forwarded[before]!.changed, false);
  });

  it('notifications/tools/list_changed passes through', async () => {
    const r = await h().rpc({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    assert.equal(r.status, 202);
  });

  it('a result with tools that answers another method is not filtered', async () => {
    // Only responses to tools/list are rewritten.
    const r = await h().rpc({ jsonrpc: '2.0', id: 4, method: 'custom/thing', params: { tools: [{ name: 'add' }] } });
    assert.deepEqual((r.json as JsonRpcMessage).result, { echo: { jsonrpc: '2.0', id: 4, method: 'custom/thing', params: { tools: [{ name: 'add' }] } } });
  });
});

describe('toolFilter: quirk 14, a filter entry with a comma is one tool name', () => {
  const h = withHarness({ filterTools: ['fetch,echo'] });
  it('lists nothing, since no tool is called "fetch,echo"', async () => {
    const r = await h().rpc(list());
    assert.deepEqual(toolsOf(r.json as JsonRpcMessage), []);
  });
  it('rejects a call to fetch', async () => {
    const r = await h().rpc(call('fetch'));
    assert.equal((r.json as JsonRpcMessage).error?.message, 'tool not found');
  });
});

describe('toolFilter: spec §9 item 3, override name + description (fetch → custom_fetch_tool)', () => {
  const h = withHarness({ toolsOverride: { fetch: { name: 'custom_fetch_tool', description: 'A customized fetch tool' } } });

  it('tools/list shows the new name and description, other fields and other tools intact', async () => {
    const r = await h().rpc(list());
    const tools = toolsOf(r.json as JsonRpcMessage);
    assert.deepEqual(tools, [{ ...CANNED_TOOLS[0], name: 'custom_fetch_tool', description: 'A customized fetch tool' }, CANNED_TOOLS[1], CANNED_TOOLS[2]]);
  });

  it('tools/call of the new name is forwarded under the actual name, with ctx.mcp updated', async () => {
    const before = h().forwarded.length;
    const r = await h().rpc(call('custom_fetch_tool', 11, { _meta: { progressToken: 'p' } }));
    assert.equal(r.status, 200);
    assert.deepEqual((r.json as JsonRpcMessage).result, { content: [{ type: 'text', text: 'called fetch' }] });
    const f = h().forwarded[before]!;
    assert.equal(f.changed, true);
    assert.deepEqual(f.message, call('fetch', 11, { _meta: { progressToken: 'p' } }));
    assert.equal(f.mcp?.resourceId, 'fetch');
    assert.equal(f.mcp?.params?.name, 'fetch');
    assert.deepEqual(f.mcp?.arguments, { url: 'https://example.com' });
  });

  it('tools/call of the ACTUAL name still reaches the tool when no filter is set (as ToolHive)', async () => {
    const before = h().forwarded.length;
    const r = await h().rpc(call('fetch'));
    assert.equal(r.status, 200);
    assert.deepEqual((r.json as JsonRpcMessage).result, { content: [{ type: 'text', text: 'called fetch' }] });
    assert.equal(h().forwarded[before]!.changed, false);
  });

  it('tools/call of a tool that is not renamed is untouched', async () => {
    const before = h().forwarded.length;
    await h().rpc(call('add'));
    assert.equal(h().forwarded[before]!.changed, false);
    assert.equal(h().forwarded[before]!.message?.params && (h().forwarded[before]!.message!.params as { name: string }).name, 'add');
  });
});

describe('toolFilter: spec §9 item 3, description-only and name-only overrides', () => {
  const descOnly = withHarness({ toolsOverride: { fetch: { description: 'Only the description changes' } } });
  const nameOnly = withHarness({ toolsOverride: { fetch: { name: 'web_fetch' } } });

  it('description-only keeps the name fetch', async () => {
    const tools = toolsOf((await descOnly().rpc(list())).json as JsonRpcMessage);
    assert.deepEqual(tools[0], { ...CANNED_TOOLS[0], description: 'Only the description changes' });
    const before = descOnly().forwarded.length;
    await descOnly().rpc(call('fetch'));
    assert.equal(descOnly().forwarded[before]!.changed, false);
  });

  it('name-only shows the new name and keeps the description', async () => {
    const tools = toolsOf((await nameOnly().rpc(list())).json as JsonRpcMessage);
    assert.deepEqual(tools[0], { ...CANNED_TOOLS[0], name: 'web_fetch' });
  });
});

describe('toolFilter: spec §9 item 4, filter by the overridden name', () => {
  const h = withHarness({
    filterTools: ['filtered_and_overridden_fetch'],
    toolsOverride: { fetch: { name: 'filtered_and_overridden_fetch', description: 'Renamed and filtered' } },
  });

  it('tools/list shows exactly the renamed tool', async () => {
    const tools = toolsOf((await h().rpc(list())).json as JsonRpcMessage);
    assert.deepEqual(tools, [{ ...CANNED_TOOLS[0], name: 'filtered_and_overridden_fetch', description: 'Renamed and filtered' }]);
  });

  it('tools/call of the new name is allowed and rewritten', async () => {
    const before = h().forwarded.length;
    const r = await h().rpc(call('filtered_and_overridden_fetch'));
    assert.deepEqual((r.json as JsonRpcMessage).result, { content: [{ type: 'text', text: 'called fetch' }] });
    assert.equal((h().forwarded[before]!.message!.params as { name: string }).name, 'fetch');
  });

  it('quirk 13: tools/call of the actual name is "tool not found" (the filter holds client-visible names)', async () => {
    const before = h().forwarded.length;
    const r = await h().rpc(call('fetch'));
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { jsonrpc: '2.0', error: { code: -32602, message: 'tool not found' }, id: 7 });
    assert.equal(h().forwarded.length, before);
  });

  it('tools/call of another tool is "tool not found"', async () => {
    const r = await h().rpc(call('echo'));
    assert.equal((r.json as JsonRpcMessage).error?.message, 'tool not found');
  });
});

describe('toolFilter: filter naming the actual name of a renamed tool (quirk 13)', () => {
  // The filter compares the client-visible name: "fetch" is now "web_fetch", so it is not listed, and a
  // call to web_fetch is refused. A call to "fetch" passes the filter and reaches the server (ToolHive).
  const h = withHarness({ filterTools: ['fetch'], toolsOverride: { fetch: { name: 'web_fetch' } } });

  it('lists nothing', async () => {
    assert.deepEqual(toolsOf((await h().rpc(list())).json as JsonRpcMessage), []);
  });
  it('refuses the new name', async () => {
    assert.equal(((await h().rpc(call('web_fetch'))).json as JsonRpcMessage).error?.message, 'tool not found');
  });
  it('forwards the actual name unchanged', async () => {
    const before = h().forwarded.length;
    const r = await h().rpc(call('fetch'));
    assert.equal(r.status, 200);
    assert.equal(h().forwarded[before]!.changed, false);
  });
});

describe('toolFilter: a rename onto the name of another tool', () => {
  // ToolHive's test "No filter, Override Bar -> Foo": both appear as Foo, and a call to Foo goes to Bar.
  const h = withHarness({ toolsOverride: { echo: { name: 'fetch' } } });

  it('lists both under the same name, each with its own fields', async () => {
    const tools = toolsOf((await h().rpc(list())).json as JsonRpcMessage);
    assert.deepEqual(tools, [CANNED_TOOLS[0], { ...CANNED_TOOLS[1], name: 'fetch' }, CANNED_TOOLS[2]]);
  });
  it('routes the shared name to the renamed tool', async () => {
    const r = await h().rpc(call('fetch'));
    assert.deepEqual((r.json as JsonRpcMessage).result, { content: [{ type: 'text', text: 'called echo' }] });
  });
});

describe('toolFilter: response transform edge cases', () => {
  let respondWith: JsonRpcMessage | JsonRpcMessage[] | undefined;
  const responder: Responder = () => respondWith;
  const filtered = withHarness({ filterTools: ['fetch'], toolsOverride: { echo: { description: 'x' } } }, responder);
  const renameOnly = withHarness({ toolsOverride: { echo: { name: 'say' } } }, responder);

  it('an error response to tools/list passes unchanged', async () => {
    respondWith = { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'boom' } };
    const r = await filtered().rpc(list());
    assert.deepEqual(r.json, respondWith);
  });

  it('a result without a tools array passes unchanged', async () => {
    respondWith = { jsonrpc: '2.0', id: 1, result: { tools: 'nope' } };
    assert.deepEqual((await filtered().rpc(list())).json, respondWith);
  });

  it('nameless tools are dropped under a filter and kept without one', async () => {
    respondWith = { jsonrpc: '2.0', id: 1, result: { tools: [{ description: 'no name' }, null, { name: 'fetch' }, { name: 'echo' }] } };
    assert.deepEqual(toolsOf((await filtered().rpc(list())).json as JsonRpcMessage), [{ name: 'fetch' }]);
    assert.deepEqual(toolsOf((await renameOnly().rpc(list())).json as JsonRpcMessage), [{ description: 'no name' }, null, { name: 'fetch' }, { name: 'say' }]);
  });

  it('every message streamed for the request goes through the transform (SSE)', async () => {
    respondWith = [
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } },
      { jsonrpc: '2.0', id: 1, result: { tools: CANNED_TOOLS } },
    ];
    const r = await filtered().rpc(list());
    assert.equal(r.messages.length, 2);
    assert.deepEqual(r.messages[0], respondWith[0]);
    assert.deepEqual(toolsOf(r.messages[1]), [CANNED_TOOLS[0]]);
  });
});

describe('toolFilter: the transform itself', () => {
  /** Runs the stage on a fake tools/list context and returns the transform it registered. */
  async function transformOf(stage: NamedMiddleware): Promise<(m: JsonRpcMessage) => JsonRpcMessage> {
    const ctx = {
      mcp: { kind: 'request', method: 'tools/list' },
      responseTransforms: [] as Array<(m: JsonRpcMessage) => JsonRpcMessage>,
      startedAt: performance.now(),
      answerJson: undefined,
    };
    await stage.handle(ctx as never, async () => {});
    assert.equal(ctx.responseTransforms.length, 1);
    return ctx.responseTransforms[0]!;
  }

  it('does not mutate its input and returns a new message when it changes something', async () => {
    const t = await transformOf(toolFilter({ filterTools: ['echo'], toolsOverride: { echo: { name: 'echo', description: 'new' } } })!);
    const input = deepFreeze({ jsonrpc: '2.0', id: 1, result: { tools: structuredClone(CANNED_TOOLS) } } as JsonRpcMessage);
    const out = t(input);
    assert.notEqual(out, input);
    assert.deepEqual(toolsOf(out), [{ ...CANNED_TOOLS[1], description: 'new' }]);
    assert.equal(toolsOf(input).length, 3);
  });

  it('returns the very same object when nothing changes', async () => {
    const t = await transformOf(toolFilter({ filterTools: ['fetch', 'echo', 'add'] })!);
    const input = deepFreeze({ jsonrpc: '2.0', id: 1, result: { tools: structuredClone(CANNED_TOOLS) } } as JsonRpcMessage);
    assert.equal(t(input), input);
  });

  it('the same transform serves any number of requests', async () => {
    const stage = toolFilter({ filterTools: ['add'] })!;
    const a = await transformOf(stage);
    const b = await transformOf(stage);
    assert.equal(a, b);
  });
});
