import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseAuthzConfig } from '../../src/authz/config.js';
import { CedarAuthorizer } from '../../src/authz/engine.js';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/logging.js';
import { authz } from '../../src/middleware/authz.js';
import { toolFilter } from '../../src/middleware/tool-filter.js';
import type { Identity, NamedMiddleware } from '../../src/middleware/types.js';
import type { JsonRpcMessage } from '../../src/transport/jsonrpc.js';
import { defaultResponder, startHarness, type Harness, type Responder } from '../helpers/middleware-harness.js';

const logger = createLogger({ destination: new Writable({ write: (_c, _e, cb) => cb() }) });

function authorizer(policies: string[]): CedarAuthorizer {
  return new CedarAuthorizer(parseAuthzConfig({ version: '1.0', type: 'cedarv1', cedar: { policies } }));
}

/** Stands in for the auth stage: the caller from the x-test-sub header; none when absent. */
const fakeAuth: NamedMiddleware = {
  name: 'auth',
  async handle(ctx, next) {
    const sub = ctx.req.headers['x-test-sub'];
    if (typeof sub === 'string') {
      const identity: Identity = { subject: sub, claims: { sub, groups: String(ctx.req.headers['x-test-groups'] ?? '').split(',').filter(Boolean) }, token: 't' };
      ctx.identity = identity;
    }
    return next();
  },
};

const POLICIES = [
  'permit(principal, action == Action::"call_tool", resource == Tool::"fetch");',
  'permit(principal in THVGroup::"eng", action == Action::"call_tool", resource) when { resource has readOnlyHint && resource.readOnlyHint };',
  'permit(principal, action == Action::"call_tool", resource == Tool::"add") when { resource.readOnlyHint };',
];

const TOOLS = [
  { name: 'fetch', annotations: { readOnlyHint: true } },
  { name: 'echo' },
  { name: 'add', annotations: { readOnlyHint: true } },
  { name: 'write', annotations: { readOnlyHint: false } },
  { description: 'nameless' },
];

const responder: Responder = (message, ctx) => {
  if (message?.method === 'tools/list') {
    const bad = ctx.req.headers['x-bad-list'];
    if (bad === 'not-array') return { jsonrpc: '2.0', id: message.id!, result: { tools: 'oops' } };
    if (bad === 'both') return { jsonrpc: '2.0', id: message.id!, result: { tools: TOOLS }, error: { code: 1, message: 'x' } } as JsonRpcMessage;
    if (bad === 'error') return { jsonrpc: '2.0', id: message.id!, error: { code: -32000, message: 'server says no' } };
    return [
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'listing' } },
      { jsonrpc: '2.0', id: message.id!, result: { tools: TOOLS, nextCursor: 'c2' } },
    ];
  }
  if (message?.method === 'prompts/list') return { jsonrpc: '2.0', id: message.id!, result: { prompts: [{ name: 'p' }] } };
  return defaultResponder(message, ctx);
};

describe('authz stage', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness([fakeAuth, authz({ authorizer: authorizer(POLICIES), serverName: 'srv', logger })], responder);
  });
  after(() => h.close());
  const alice = { 'x-test-sub': 'alice' };
  const eng = { 'x-test-sub': 'bob', 'x-test-groups': 'eng' };
  const call = (name: string, id: unknown = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

  it('deny is 403 with the JSON-RPC body of the reference, echoing the id', async () => {
    let r = await h.rpc(call('echo', 7), alice);
    assert.equal(r.status, 403);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.text, '{"jsonrpc":"2.0","id":7,"error":{"code":403,"message":"Unauthorized"}}');
    r = await h.rpc(call('echo', 'abc'), alice);
    assert.equal(r.text, '{"jsonrpc":"2.0","id":"abc","error":{"code":403,"message":"Unauthorized"}}');
    r = await h.rpc(call('echo', 2.9), alice);
    assert.equal(r.text, '{"jsonrpc":"2.0","id":2,"error":{"code":403,"message":"Unauthorized"}}');
    r = await h.rpc({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'echo' } }, alice);
    assert.equal(r.text, '{"jsonrpc":"2.0","error":{"code":403,"message":"Unauthorized"}}');
    const ok = await h.rpc(call('fetch'), alice);
    assert.equal(ok.status, 200);
  });

  it('fail-closed: no identity, unknown methods, malformed requests and client responses', async () => {
    assert.equal((await h.rpc(call('fetch'))).status, 403, 'no identity');
    assert.equal((await h.rpc({ jsonrpc: '2.0', id: 1, method: 'sampling/createMessage', params: {} }, alice)).status, 403);
    assert.equal((await h.rpc({ jsonrpc: '2.0', id: 1, method: 'nonsense/x', params: {} }, alice)).status, 403);
    assert.equal((await h.rpc({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }, alice)).status, 403, 'no name');
    assert.equal((await h.rpc({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: ['fetch'] }, alice)).status, 403, 'array params');
    assert.equal((await h.rpc({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fetch', arguments: 'x' } }, alice)).status, 403);
    assert.equal((await h.rpc({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 5 } }, alice)).status, 403);
    const resp = await h.rpc({ jsonrpc: '2.0', id: 'srv-1', result: {} }, alice);
    assert.equal(resp.status, 400);
    assert.equal(resp.text, 'Invalid or malformed MCP request\n');
    const notJson = await h.request({ method: 'POST', body: 'not json', headers: { 'content-type': 'application/json', ...alice } });
    assert.equal(notJson.status, 400);
    // Always allowed, and non-POST passes.
    assert.equal((await h.rpc({ jsonrpc: '2.0', id: 1, method: 'ping' }, alice)).status, 200);
    assert.equal((await h.rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, alice)).status, 202);
    assert.notEqual((await h.request({ method: 'GET', headers: alice })).status, 403);
  });

  it('a missing annotation is a missing attribute: deny until tools/list taught the hints', async () => {
    const fresh = await startHarness([fakeAuth, authz({ authorizer: authorizer(POLICIES), serverName: 'srv', logger })], responder);
    try {
      assert.equal((await fresh.rpc(call('add'), alice)).status, 403, 'add: resource.readOnlyHint missing → error → deny');
      const list = await fresh.rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, eng);
      const result = list.messages.find((m) => m.id === 2)!.result as { tools: Array<{ name: string }>; nextCursor: string };
      assert.deepEqual(result.tools.map((t) => t.name), ['fetch', 'add'], 'eng sees read-only tools only; nameless dropped');
      assert.equal(result.nextCursor, 'c2');
      assert.ok(list.messages.some((m) => m.method === 'notifications/message'), 'other messages pass');
      assert.equal((await fresh.rpc(call('add'), alice)).status, 200, 'hints learnt from the server list');
      // The client cannot claim hints in its call.
      const smuggle = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'write', arguments: {}, annotations: { readOnlyHint: true } } };
      assert.equal((await fresh.rpc(smuggle, eng)).status, 403);
    } finally {
      await fresh.close();
    }
  });

  it('lists are filtered per caller; broken list answers fail closed', async () => {
    const r = await h.rpc({ jsonrpc: '2.0', id: 5, method: 'tools/list' }, alice);
    const result = r.messages.find((m) => m.id === 5)!.result as { tools: Array<{ name: string }> };
    assert.deepEqual(result.tools.map((t) => t.name), ['fetch', 'add']);
    const prompts = await h.rpc({ jsonrpc: '2.0', id: 6, method: 'prompts/list' }, alice);
    assert.deepEqual((prompts.json as { result: { prompts: unknown[] } }).result.prompts, []);
    for (const bad of ['not-array', 'both']) {
      const b = await h.rpc({ jsonrpc: '2.0', id: 8, method: 'tools/list' }, { ...alice, 'x-bad-list': bad });
      assert.deepEqual(b.json, { jsonrpc: '2.0', id: 8, error: { code: -32603, message: 'internal error' } }, bad);
    }
    const e = await h.rpc({ jsonrpc: '2.0', id: 9, method: 'tools/list' }, { ...alice, 'x-bad-list': 'error' });
    assert.deepEqual(e.json, { jsonrpc: '2.0', id: 9, error: { code: -32000, message: 'server says no' } });
  });

  it('runs before the tool filter renames on the way back (policies see the real names)', async () => {
    const chain = await startHarness(
      [
        fakeAuth,
        toolFilter({ toolsOverride: { fetch: { name: 'get_url' } } }),
        authz({ authorizer: authorizer(POLICIES), serverName: 'srv', logger }),
      ],
      responder,
    );
    try {
      const r = await chain.rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, alice);
      const names = (r.messages.find((m) => m.id === 1)!.result as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
      assert.ok(names.includes('get_url') && !names.includes('echo'), names.join());
      assert.equal((await chain.rpc(call('get_url'), alice)).status, 200, 'the renamed tool is authorised under its real name');
    } finally {
      await chain.close();
    }
  });
});
