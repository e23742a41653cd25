/** Cases and fixtures shared by the runner tests and the live-proxy tests (they must agree). */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, stringify } from 'yaml';
import { messagesOf, post, runThv } from '../helpers/thv.js';

export const POLICIES = fileURLToPath(new URL('./fixtures/policies.yaml', import.meta.url));
export const CATALOG_SERVER = fileURLToPath(new URL('./fixtures/catalog-server.mjs', import.meta.url));
export const CATALOG = JSON.parse(readFileSync(new URL('./fixtures/catalog.json', import.meta.url), 'utf8')) as {
  tools: Array<{ name: string; annotations?: Record<string, boolean> }>;
  prompts: Array<{ name: string }>;
  resources: Array<{ uri: string }>;
};

export interface TestCase {
  name: string;
  claims: Record<string, unknown>;
  request: { method: string; params?: unknown };
  annotations?: Record<string, boolean>;
  response?: unknown;
  expect_items?: string[];
  expect: 'allow' | 'deny';
}

const annotationsOf = (tool: string): Record<string, boolean> | undefined => CATALOG.tools.find((t) => t.name === tool)?.annotations;

function call(name: string, claims: Record<string, unknown>, tool: string, args: Record<string, unknown> | undefined, expect: 'allow' | 'deny'): TestCase {
  const a = annotationsOf(tool);
  return {
    name,
    claims,
    request: { method: 'tools/call', params: { name: tool, ...(args !== undefined ? { arguments: args } : {}) } },
    ...(a ? { annotations: a } : {}),
    expect,
  };
}

/**
 * The same requests for any caller. `groups` says which extra group claims the caller has (a real
 * token can carry them; the local user cannot), and `expectFor` adjusts expectations accordingly.
 */
export function standardCases(claims: Record<string, unknown>, opts: { admin?: boolean; eng?: boolean } = {}): TestCase[] {
  const admin = opts.admin === true;
  const eng = opts.eng === true;
  const allowIf = (b: boolean): 'allow' | 'deny' => (b ? 'allow' : 'deny');
  return [
    call('weather is permitted', claims, 'weather', { city: 'Paris' }, 'allow'),
    call('forbid beats permit (Atlantis)', claims, 'weather', { city: 'Atlantis' }, 'deny'),
    call('names are case-sensitive (Weather)', claims, 'Weather', undefined, allowIf(admin)),
    call('read-only tool via annotation', claims, 'search', { q: 'x' }, 'allow'),
    call('destructive tool is forbidden even for admins', claims, 'delete_file', { path: '/tmp/x' }, 'deny'),
    call('deploy to staging needs eng', claims, 'deploy', { env: 'staging' }, allowIf(eng || admin)),
    call('deploy to prod', claims, 'deploy', { env: 'prod' }, allowIf(admin)),
    call('calc with a small number (decimal)', claims, 'calc', { n: 5 }, 'allow'),
    call('calc with a big number', claims, 'calc', { n: 50 }, allowIf(admin)),
    call('calc without n: missing attribute is an error, so deny (even for admins)', claims, 'calc', {}, 'deny'),
    call('calc with n as a string: type error, so deny', claims, 'calc', { n: '5' }, 'deny'),
    call('object argument becomes arg_n_present (arg_n missing: deny)', claims, 'calc', { n: { v: 1 } }, 'deny'),
    { name: 'prompt greeting', claims, request: { method: 'prompts/get', params: { name: 'greeting' } }, expect: 'allow' },
    { name: 'prompt admin_report', claims, request: { method: 'prompts/get', params: { name: 'admin_report' } }, expect: allowIf(admin) },
    { name: 'public resource', claims, request: { method: 'resources/read', params: { uri: 'file:///public/readme.md' } }, expect: 'allow' },
    { name: 'secret resource', claims, request: { method: 'resources/read', params: { uri: 'file:///secret/keys.txt' } }, expect: allowIf(admin) },
    { name: 'ping is always allowed', claims, request: { method: 'ping' }, expect: 'allow' },
    { name: 'sampling is denied without policies', claims, request: { method: 'sampling/createMessage', params: {} }, expect: 'deny' },
    { name: 'unknown method is denied', claims, request: { method: 'tools/destroy', params: { name: 'weather' } }, expect: 'deny' },
    { name: 'malformed: tools/call without a name', claims, request: { method: 'tools/call', params: { arguments: {} } }, expect: 'deny' },
    { name: 'malformed: arguments not an object', claims, request: { method: 'tools/call', params: { name: 'weather', arguments: [1] } }, expect: 'deny' },
    {
      name: 'tools/list is filtered',
      claims,
      request: { method: 'tools/list' },
      response: { tools: CATALOG.tools },
      // deploy and Weather only for admins; calc (no n: error) and delete_file (forbidden) never.
      expect_items: admin ? ['weather', 'search', 'deploy', 'Weather'] : ['weather', 'search'],
      expect: 'allow',
    },
    {
      name: 'prompts/list is filtered',
      claims,
      request: { method: 'prompts/list' },
      response: { prompts: CATALOG.prompts },
      expect_items: admin ? ['greeting', 'admin_report'] : ['greeting'],
      expect: 'allow',
    },
    {
      name: 'resources/list is filtered',
      claims,
      request: { method: 'resources/list' },
      response: { resources: CATALOG.resources },
      expect_items: admin ? CATALOG.resources.map((r) => r.uri) : ['file:///public/readme.md'],
      expect: 'allow',
    },
  ];
}

interface RunnerCase {
  name: string;
  decision: 'allow' | 'deny';
  pass: boolean;
  items_kept?: string[];
}

const LIST_KEYS: Record<string, [string, string]> = {
  'tools/list': ['tools', 'name'],
  'prompts/list': ['prompts', 'name'],
  'resources/list': ['resources', 'uri'],
};

/** Sends one case's request through the proxy; returns the decision and, for lists, what survived. */
export async function throughProxy(url: string, headers: Record<string, string>, c: TestCase, id: number): Promise<{ decision: 'allow' | 'deny'; items?: string[] }> {
  const body = { jsonrpc: '2.0', id, method: c.request.method, ...(c.request.params !== undefined ? { params: c.request.params } : {}) };
  const res = await post(url, body, { ...headers, accept: 'application/json, text/event-stream' });
  if (res.status === 403) {
    assert.deepEqual(await res.json(), { jsonrpc: '2.0', id, error: { code: 403, message: 'Unauthorized' } });
    return { decision: 'deny' };
  }
  const messages = await messagesOf(res);
  assert.ok(res.status === 200, `${c.name}: HTTP ${res.status}`);
  const answer = messages.find((m) => m.id === id);
  assert.ok(answer, `${c.name}: no answer`);
  const list = LIST_KEYS[c.request.method];
  if (list) {
    const [key, field] = list;
    const items = ((answer.result as Record<string, unknown>)[key] as Array<Record<string, unknown>>).map((i) => String(i[field]));
    return { decision: 'allow', items };
  }
  return { decision: 'allow' };
}

export async function runnerDecisions(dir: string, cases: TestCase[], extraArgs: string[] = [], policies: string = POLICIES): Promise<Map<string, RunnerCase>> {
  const file = join(dir, `cases-${Date.now()}.yaml`);
  writeFileSync(file, stringify({ cases }));
  const r = await runThv(['authz', 'test', '--authz-config', policies, file, '--output', 'json', ...extraArgs]);
  assert.equal(r.code, 0, `runner: ${r.stdout}\n${r.stderr}`);
  const out = JSON.parse(r.stdout) as { cases: RunnerCase[] };
  return new Map(out.cases.map((c) => [c.name, c]));
}

/**
 * POLICIES rewritten in the other shape users have: `{type: "policyv1", policy: {...}}`, as JSON. The
 * live-proxy tests use one shape each, so `thv run` is shown with both.
 */
export function writePolicyV1Json(dir: string): string {
  const doc = parseYaml(readFileSync(POLICIES, 'utf8')) as { version: string; cedar: unknown };
  const file = join(dir, 'policies-policyv1.json');
  writeFileSync(file, JSON.stringify({ version: doc.version, type: 'policyv1', policy: doc.cedar }, null, 2));
  return file;
}

/** Every case: runner decision = proxy decision = expectation; list items identical. */
export async function assertAgreement(url: string, headers: Record<string, string>, cases: TestCase[], runner: Map<string, RunnerCase>): Promise<void> {
  let id = 100;
  for (const c of cases) {
    const offline = runner.get(c.name);
    assert.ok(offline, `runner has no result for ${c.name}`);
    const live = await throughProxy(url, headers, c, id++);
    assert.equal(live.decision, offline.decision, `${c.name}: proxy ${live.decision}, runner ${offline.decision}`);
    assert.equal(live.decision, c.expect, `${c.name}: expected ${c.expect}`);
    if (c.expect_items !== undefined) {
      assert.deepEqual(live.items, offline.items_kept, `${c.name}: items differ`);
      assert.deepEqual([...live.items!].sort(), [...c.expect_items].sort(), `${c.name}: items`);
    }
  }
}

