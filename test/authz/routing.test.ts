/**
 * Method routing, as the reference's table (spec §2.2) plus issue 5's fail-closed rules: which methods
 * pass without policies, which are denied without policies, which are checked (and how), which have
 * their answers filtered. The proxy stage and `thv authz test|check` share this one table.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { routeMethod } from '../../src/authz/mcp.js';

const ALWAYS_ALLOWED = [
  'ping',
  'initialize',
  'roots/list',
  'server/discover',
  'subscriptions/listen',
  'logging/setLevel',
  'completion/complete',
  // Forwarded, answers not filtered.
  'resources/templates/list',
  'features/list',
  'notifications/message',
  'notifications/initialized',
  'notifications/progress',
  'notifications/cancelled',
  'notifications/roots/list_changed',
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
  'notifications/tasks/status',
];

const ALWAYS_DENIED = [
  'sampling/createMessage',
  'elicitation/create',
  'tasks/get',
  'tasks/list',
  'tasks/result',
  'tasks/cancel',
  'notifications/elicitation/complete',
  // Unknown methods, and near-misses of known ones (matching is exact and case-sensitive).
  'tools/destroy',
  'Tools/call',
  'tools/call ',
  'PING',
  'notifications/unknown',
  'tools/list/extra',
  '',
];

describe('method routing', () => {
  it('always allows the methods of the reference, whatever the params', () => {
    for (const m of ALWAYS_ALLOWED) {
      assert.deepEqual(routeMethod(m, undefined), { kind: 'allow' }, m);
      assert.deepEqual(routeMethod(m, ['odd params']), { kind: 'allow' }, `${m} with array params`);
    }
  });

  it('denies sampling, elicitation, tasks and every unknown method without asking the policies', () => {
    for (const m of ALWAYS_DENIED) {
      const r = routeMethod(m, { name: 'weather' });
      assert.equal(r.kind, 'deny', JSON.stringify(m));
      assert.match((r as { reason: string }).reason, /not allowed/);
    }
    for (const m of [undefined, 5 as unknown as string]) {
      assert.deepEqual(routeMethod(m, {}), { kind: 'deny', reason: 'malformed request: no method' });
    }
  });

  it('checks tools/call, prompts/get and resources/read|subscribe|unsubscribe against the policies', () => {
    assert.deepEqual(routeMethod('tools/call', { name: 'weather', arguments: { city: 'Paris' } }), {
      kind: 'check', action: 'call_tool', resourceId: 'weather', arguments: { city: 'Paris' },
    });
    assert.deepEqual(routeMethod('prompts/get', { name: 'greeting', arguments: { who: 'x' } }), {
      kind: 'check', action: 'get_prompt', resourceId: 'greeting', arguments: { who: 'x' },
    });
    for (const m of ['resources/read', 'resources/subscribe', 'resources/unsubscribe']) {
      // Resources carry no arguments, even when a client sends some.
      assert.deepEqual(routeMethod(m, { uri: 'file:///a b', arguments: { x: 1 } }), {
        kind: 'check', action: 'read_resource', resourceId: 'file:///a b', arguments: undefined,
      }, m);
    }
    // null arguments are "no arguments", as in the reference.
    assert.deepEqual(routeMethod('tools/call', { name: 't', arguments: null }), { kind: 'check', action: 'call_tool', resourceId: 't', arguments: undefined });
  });

  it('forwards list requests and filters their answers', () => {
    assert.deepEqual(routeMethod('tools/list', undefined), { kind: 'list', list: 'tools' });
    assert.deepEqual(routeMethod('prompts/list', { cursor: 'c' }), { kind: 'list', list: 'prompts' });
    assert.deepEqual(routeMethod('resources/list', undefined), { kind: 'list', list: 'resources' });
  });

  it('fail-closed: a checked method with a malformed request denies', () => {
    const malformed: Array<[string, unknown]> = [
      ['tools/call', undefined],
      ['tools/call', null],
      ['tools/call', 'weather'],
      ['tools/call', ['weather']],
      ['tools/call', {}],
      ['tools/call', { name: '' }],
      ['tools/call', { name: 5 }],
      ['tools/call', { name: ['weather'] }],
      ['tools/call', { name: 'weather', arguments: 'city=Paris' }],
      ['tools/call', { name: 'weather', arguments: ['Paris'] }],
      ['tools/call', { name: 'weather', arguments: 7 }],
      ['prompts/get', { name: null }],
      ['prompts/get', { name: 'greeting', arguments: [] }],
      ['resources/read', {}],
      ['resources/read', { uri: 5 }],
      ['resources/read', { name: 'file:///x' }],
      ['resources/subscribe', { uri: '' }],
      ['resources/unsubscribe', undefined],
    ];
    for (const [m, params] of malformed) {
      const r = routeMethod(m, params);
      assert.equal(r.kind, 'deny', `${m} ${JSON.stringify(params)}`);
      assert.match((r as { reason: string }).reason, /^malformed request/);
    }
  });
});
