import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runThv } from '../helpers/thv.js';
import { CATALOG, POLICIES, standardCases } from './shared.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'thv-authz-runner-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

interface JsonOutput {
  cases: Array<{ name: string; decision: string; pass: boolean; policies: string[]; errors: string[]; items_kept?: string[]; reason?: string }>;
  passed: number;
  failed: number;
}

describe('thv authz test', () => {
  const alice = { sub: 'alice', email: 'alice@example.com', groups: ['eng'] };
  const admin = { sub: 'root', email: 'root@corp.test', groups: ['ops'] };
  const cases = [...standardCases(alice, { eng: true }), ...standardCases(admin, { admin: true }).map((c) => ({ ...c, name: `admin: ${c.name}` }))];

  it('passes every case, one line each and a summary (YAML cases)', async () => {
    const file = write('cases.yaml', stringify({ cases }));
    const r = await runThv(['authz', 'test', '--authz-config', POLICIES, file]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, cases.length + 1);
    assert.ok(lines.slice(0, -1).every((l) => l.startsWith('PASS ')), r.stdout);
    assert.equal(lines.at(-1), `${cases.length} passed, 0 failed`);
    assert.match(r.stdout, /PASS forbid beats permit \(Atlantis\): deny \(policy1\)/);
  });

  it('--output json gives decision, deciding policies and evaluation errors per case', async () => {
    const file = write('cases.json', JSON.stringify({ cases }));
    const r = await runThv(['authz', 'test', '--authz-config', POLICIES, file, '--output', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as JsonOutput;
    assert.equal(out.passed, cases.length);
    const byName = new Map(out.cases.map((c) => [c.name, c]));
    assert.deepEqual(byName.get('weather is permitted')!.policies, ['policy0', 'policy2']);
    assert.deepEqual(byName.get('forbid beats permit (Atlantis)')!.policies, ['policy1']);
    const missing = byName.get('calc without n: missing attribute is an error, so deny (even for admins)')!;
    assert.equal(missing.decision, 'deny');
    assert.match(missing.errors.join(), /policy6: .*arg_n/);
    assert.match(byName.get('unknown method is denied')!.reason!, /not allowed/);
    assert.deepEqual(byName.get('tools/list is filtered')!.items_kept, ['weather', 'search']);
  });

  it('mismatches print FAIL, count, and exit 1', async () => {
    const file = write(
      'failing.yaml',
      stringify({
        cases: [
          { name: 'wrong expectation', claims: alice, request: { method: 'tools/call', params: { name: 'Weather' } }, expect: 'allow' },
          { name: 'right', claims: alice, request: { method: 'tools/call', params: { name: 'weather' } }, expect: 'allow' },
          { name: 'leaky list', claims: alice, request: { method: 'tools/list' }, response: { tools: CATALOG.tools }, expect_items: ['weather'], expect: 'allow' },
        ],
      }),
    );
    const r = await runThv(['authz', 'test', '--authz-config', POLICIES, file]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /^FAIL wrong expectation: expected allow, got deny/m);
    assert.match(r.stdout, /^FAIL leaky list: .*items: \[weather, search\] expected \[weather\]/m);
    assert.match(r.stdout, /^1 passed, 2 failed$/m);
  });

  it('an invalid config or cases file exits 2 with the parser message and a line', async () => {
    const bad = write('bad.yaml', 'version: "1.0"\ntype: cedarv1\ncedar:\n  policies:\n    - "permit(principal, action, resource);"\n    - "permit(principal, action, resource) when { context.x == };"\n');
    const cases = write('ok.yaml', stringify({ cases: [] }));
    const r = await runThv(['authz', 'test', '--authz-config', bad, cases]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /bad\.yaml:6:\d+: policy1: /);
    const badCases = write('bad-cases.yaml', 'cases:\n  - name: x\n    request: {method: ping}\n    expect: maybe\n');
    const r2 = await runThv(['authz', 'test', '--authz-config', POLICIES, badCases]);
    assert.equal(r2.code, 2);
    assert.match(r2.stderr, /case 1 \(x\): expect must be allow or deny/);
  });
});

describe('thv authz test: server_name and --server-name', () => {
  it('a case names the server (MCP::"<name>" parent); --server-name fills in for cases without one', async () => {
    const policies = write('mcp.yaml', 'version: "1.0"\ntype: cedarv1\ncedar:\n  policies:\n    - \'permit(principal, action == Action::"call_tool", resource in MCP::"prod");\'\n');
    const call = { method: 'tools/call', params: { name: 'weather' } };
    const file = write(
      'servers.yaml',
      stringify({
        cases: [
          { name: 'prod server', claims: { sub: 'a' }, server_name: 'prod', request: call, expect: 'allow' },
          { name: 'dev server', claims: { sub: 'a' }, server_name: 'dev', request: call, expect: 'deny' },
          { name: 'default server', claims: { sub: 'a' }, request: call, expect: 'allow' },
        ],
      }),
    );
    const r = await runThv(['authz', 'test', '--authz-config', policies, file, '--server-name', 'prod']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^PASS prod server: allow \(policy0\)$/m);
    assert.match(r.stdout, /^PASS dev server: deny$/m);
    assert.match(r.stdout, /^3 passed, 0 failed$/m);
    const without = await runThv(['authz', 'test', '--authz-config', policies, file]);
    assert.equal(without.code, 1, 'without --server-name the case without server_name is denied');
    assert.match(without.stdout, /^FAIL default server: expected allow, got deny/m);
  });
});

describe('thv authz check', () => {
  it('exits 2 with the parser message and line when the config does not load', async () => {
    const bad = write('check-bad.json', '{\n  "version": "1.0",\n  "type": "cedarv1",\n  "cedar": {"policies": ["permit(principal, action, resource) when { x };"]}\n}\n');
    const r = await runThv(['authz', 'check', '--authz-config', bad, '--request', '{"method":"ping"}']);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /check-bad\.json:4:\d+: policy0: /);
  });

  it('answers one request: exit 0 on allow, 1 on deny, JSON on request', async () => {
    const req = JSON.stringify({ method: 'tools/call', params: { name: 'weather', arguments: { city: 'Paris' } } });
    const allow = await runThv(['authz', 'check', '--authz-config', POLICIES, '--request', req, '--claims', '{"sub":"alice"}']);
    assert.equal(allow.code, 0, allow.stderr);
    assert.equal(allow.stdout.trim(), 'allow (policy0)');
    const deny = await runThv(['authz', 'check', '--authz-config', POLICIES, '--request', JSON.stringify({ method: 'tools/call', params: { name: 'calc' } }), '--claims', '{"sub":"alice"}', '--output', 'json']);
    assert.equal(deny.code, 1);
    const out = JSON.parse(deny.stdout) as { decision: string; errors: string[] };
    assert.equal(deny.stdout.includes('"pass"'), false);
    assert.equal(out.decision, 'deny');
    assert.match(out.errors.join(), /arg_n/);
    const ann = await runThv([
      'authz', 'check', '--authz-config', POLICIES, '--claims', '{"sub":"a"}',
      '--request', '{"method":"tools/call","params":{"name":"deploy"}}', '--annotations', '{"readOnlyHint": true}',
    ]);
    assert.equal(ann.stdout.trim(), 'allow (policy2)');
    const list = await runThv([
      'authz', 'check', '--authz-config', POLICIES, '--claims', '{"sub":"a"}',
      '--request', '{"method":"resources/list"}', '--response', JSON.stringify({ resources: CATALOG.resources }),
    ]);
    assert.equal(list.code, 0);
    assert.match(list.stdout, /items: \[file:\/\/\/public\/readme\.md\]/);
  });
});
