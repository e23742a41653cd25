import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAuthzConfig, type AuthzConfig } from '../../src/authz/config.js';
import { CedarAuthorizer } from '../../src/authz/engine.js';
import { loadAuthzDoc, loadAuthzFile } from '../../src/authz/load.js';
import { buildPrincipal, extractAllGroups, type AuthzRequest } from '../../src/authz/request.js';
import { formatDecimal, toCedarValue } from '../../src/authz/values.js';
import { isThvError, ErrorCodes } from '../../src/errors.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'thv-authz-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function config(policies: string[], extra: Record<string, unknown> = {}): AuthzConfig {
  return parseAuthzConfig({ version: '1.0', type: 'cedarv1', cedar: { policies, entities_json: '[]', ...extra } });
}
function authorizer(policies: string[], extra: Record<string, unknown> = {}): CedarAuthorizer {
  return new CedarAuthorizer(config(policies, extra));
}
function tool(name: string, claims: Record<string, unknown> = { sub: 'alice' }, args?: Record<string, unknown>, annotations?: AuthzRequest['annotations']): AuthzRequest {
  return { claims, action: 'call_tool', resourceId: name, arguments: args, annotations, serverName: 'srv' };
}
/** Fast path, engine on the whole set, and explain: all three must agree. */
function decide(a: CedarAuthorizer, req: AuthzRequest): 'allow' | 'deny' {
  const fast = a.authorize(req) ? 'allow' : 'deny';
  const naive = a.authorizeNaive(req) ? 'allow' : 'deny';
  const explained = a.explain(req).decision;
  assert.equal(fast, naive, 'fast path and naive engine call disagree');
  assert.equal(fast, explained, 'fast path and explain disagree');
  return fast;
}
function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe('value conversion (as ToolHive)', () => {
  it('turns every JSON number into a truncated decimal', () => {
    const dec = (n: number): unknown => (toCedarValue(n) as { __extn: { arg: string } } | undefined)?.__extn.arg;
    assert.equal(dec(5), '5.0');
    assert.equal(dec(2.71828), '2.7182');
    assert.equal(dec(0.29), '0.29'); // 0.29 * 10000 is exactly 2900 in float64 (the spec's 0.2899 example is not what Go computes)
    assert.equal(dec(1.00009), '1.0');
    assert.equal(dec(-1.5), '-1.5');
    assert.equal(dec(3.14), '3.14');
    assert.equal(dec(1e300), undefined);
    assert.equal(dec(Number.NaN), undefined);
    assert.equal(formatDecimal(-5n), '-0.0005');
  });
  it('keeps Long for the local user, drops null, converts arrays and records, caps depth at 10', () => {
    assert.equal(toCedarValue(7, { longIntegers: true }), 7);
    assert.equal(toCedarValue(null), undefined);
    assert.deepEqual(toCedarValue(['a', null, true]), ['a', true]);
    let deep: unknown = 'leaf';
    for (let i = 0; i < 12; i++) deep = { d: deep };
    let v = toCedarValue(deep) as Record<string, unknown>;
    let depth = 0;
    while (v && typeof v === 'object' && 'd' in v) {
      v = v['d'] as Record<string, unknown>;
      depth++;
    }
    assert.equal(depth, 10);
    assert.deepEqual(v, {});
  });
  it('number arguments: == 5 is false, > 1 is a type error (deny), decimal comparisons work', () => {
    const a = authorizer([
      'permit(principal, action, resource == Tool::"eq") when { context.arg_n == 5 };',
      'permit(principal, action, resource == Tool::"gt") when { context.arg_n > 1 };',
      'permit(principal, action, resource == Tool::"dec") when { context.arg_n == decimal("5.0") };',
    ]);
    assert.equal(decide(a, tool('eq', undefined, { n: 5 })), 'deny');
    assert.equal(decide(a, tool('gt', undefined, { n: 5 })), 'deny');
    assert.match(a.explain(tool('gt', undefined, { n: 5 })).errors.join(), /type error/);
    assert.equal(decide(a, tool('dec', undefined, { n: 5 })), 'allow');
  });
});

describe('groups and claims', () => {
  const opts = (o: Record<string, unknown> = {}) => config(['permit(principal, action, resource);'], o).options;
  it('uses the configured claim, then groups, roles, cognito:groups, then a provider-prefixed claim', () => {
    assert.deepEqual(extractAllGroups({ team: ['a'], groups: ['b'] }, opts({ group_claim_name: 'team' })), ['a']);
    assert.deepEqual(extractAllGroups({ groups: ['b'], roles: ['c'] }, opts()), ['b']);
    assert.deepEqual(extractAllGroups({ roles: ['c'] }, opts()), ['c']);
    assert.deepEqual(extractAllGroups({ 'cognito:groups': ['d'] }, opts()), ['d']);
    assert.deepEqual(extractAllGroups({ 'https://example.com/groups': ['e'] }, opts()), ['e']);
    // A configured claim present as [] suppresses the fallback.
    assert.deepEqual(extractAllGroups({ team: [], groups: ['b'] }, opts({ group_claim_name: 'team' })), []);
    // Dotted names walk objects; strings are not split.
    assert.deepEqual(extractAllGroups({ realm_access: { roles: ['r'] } }, opts({ group_claim_name: 'realm_access.roles' })), ['r']);
    assert.deepEqual(extractAllGroups({ groups: 'a,b' }, opts()), []);
    // The role claim is appended, duplicates removed.
    assert.deepEqual(extractAllGroups({ groups: ['a', 'b'], role: ['b', 'c'] }, opts({ role_claim_name: 'role' })), ['a', 'b', 'c']);
  });
  it('groups become THVGroup and Group parents; hierarchies come from entities_json', () => {
    const a = authorizer(
      [
        'permit(principal in THVGroup::"eng", action, resource == Tool::"a");',
        'permit(principal in Group::"eng", action, resource == Tool::"b");',
        'permit(principal in THVRole::"admin", action, resource == Tool::"c");',
      ],
      { entities_json: JSON.stringify([{ uid: { type: 'THVGroup', id: 'eng' }, parents: [{ type: 'THVRole', id: 'admin' }] }]) },
    );
    const eng = { sub: 'alice', groups: ['eng'] };
    const other = { sub: 'bob', groups: ['Eng'] };
    for (const t of ['a', 'b', 'c']) {
      assert.equal(decide(a, tool(t, eng)), 'allow', t);
      assert.equal(decide(a, tool(t, other)), 'deny', `${t}: group names are case-sensitive`);
    }
  });
  it('multi-valued claims give a joined string and a claimset', () => {
    const p = buildPrincipal({ sub: 's', scope: 'read write', aud: ['x', 'y'] }, opts({ multi_valued_claims: ['scope', 'aud'] }), false);
    assert.equal(p.attrs['claim_scope'], 'read write');
    assert.deepEqual(p.attrs['claimset_scope'], ['read', 'write']);
    assert.equal(p.attrs['claim_aud'], 'x y');
    assert.deepEqual(p.attrs['claimset_aud'], ['x', 'y']);
  });
  it('request entities replace static ones of the same uid', () => {
    const a = authorizer(['permit(principal, action, resource) when { principal has claim_role && principal.claim_role == "admin" };'], {
      entities_json: JSON.stringify([{ uid: { type: 'Client', id: 'alice' }, attrs: { claim_role: 'admin' }, parents: [] }]),
    });
    assert.equal(decide(a, tool('x', { sub: 'alice' })), 'deny');
    assert.equal(decide(a, tool('x', { sub: 'alice', role: 'admin' })), 'allow');
  });
  it('resources have the parent MCP::"<server>"', () => {
    const a = authorizer(['permit(principal, action, resource in MCP::"srv");']);
    assert.equal(decide(a, tool('x')), 'allow');
    assert.equal(decide(a, { ...tool('x'), serverName: 'other' }), 'deny');
  });
});

describe('fail-closed (what it must show, 2)', () => {
  const permitAll = 'permit(principal, action, resource);';
  it('an evaluation error denies even when another policy permits', () => {
    const a = authorizer([permitAll, 'forbid(principal, action, resource) when { context.arg_n > 1 };']);
    assert.equal(decide(a, tool('x', undefined, { n: 5 })), 'deny');
    assert.equal(a.explain(tool('x', undefined, { n: 5 })).decision, 'deny');
  });
  it('reading a missing attribute is an error, so deny; guarded with has it is not', () => {
    const a = authorizer([
      'permit(principal, action, resource == Tool::"unguarded") when { resource.readOnlyHint };',
      'permit(principal, action, resource == Tool::"guarded") when { resource has readOnlyHint && resource.readOnlyHint };',
      permitAll.replace('resource);', 'resource == Tool::"other");'),
      'forbid(principal, action, resource == Tool::"other") when { context.claim_missing == "x" };',
    ]);
    assert.equal(decide(a, tool('unguarded')), 'deny');
    assert.match(a.explain(tool('unguarded')).errors.join(), /readOnlyHint/);
    assert.equal(decide(a, tool('unguarded', undefined, undefined, { readOnlyHint: true })), 'allow');
    assert.equal(decide(a, tool('guarded')), 'deny');
    assert.equal(decide(a, tool('guarded', undefined, undefined, { readOnlyHint: true })), 'allow');
    // A forbid that errors on a missing claim still denies.
    assert.equal(decide(a, tool('other')), 'deny');
  });
  it('a missing or empty sub denies', () => {
    const a = authorizer([permitAll]);
    assert.equal(decide(a, tool('x', {})), 'deny');
    assert.equal(decide(a, tool('x', { sub: '' })), 'deny');
    assert.equal(decide(a, tool('x', { sub: 7 })), 'deny');
    assert.match(a.explain(tool('x', {})).errors.join(), /missing principal/);
  });
  it('default deny, and matching is case-sensitive', () => {
    const a = authorizer(['permit(principal, action == Action::"call_tool", resource == Tool::"weather");']);
    assert.equal(decide(a, tool('weather')), 'allow');
    assert.equal(decide(a, tool('Weather')), 'deny');
    assert.equal(decide(a, tool('weather ')), 'deny');
    assert.equal(decide(a, { ...tool('weather'), action: 'get_prompt' }), 'deny');
  });
});

describe('config files', () => {
  const policy = 'permit(principal, action == Action::\\"call_tool\\", resource == Tool::\\"weather\\");';
  it('loads ToolHive cedarv1 JSON and YAML, and the policyv1 shape', () => {
    const json = file('a.json', `{"version":"1.0","type":"cedarv1","cedar":{"policies":["${policy}"],"entities_json":"[]"}}`);
    const yaml = file('a.yaml', `version: "1.0"\ntype: policyv1\npolicy:\n  policies:\n    - 'permit(principal, action == Action::"call_tool", resource == Tool::"weather");'\n`);
    const none = file('authz', `{"version":"1.0","type":"cedarv1","cedar":{"policies":["${policy}"]}}`);
    for (const p of [json, yaml, none]) {
      const { authorizer: a } = loadAuthzFile(p);
      assert.equal(decide(a, tool('weather')), 'allow', p);
    }
  });
  const expectInvalid = (p: string, re: RegExp): void => {
    assert.throws(
      () => loadAuthzFile(p),
      (err: unknown) => {
        assert.ok(isThvError(err, ErrorCodes.InvalidConfig), String(err));
        assert.match((err as Error).message, re);
        return true;
      },
    );
  };
  it('bad Cedar names the policy and its line', () => {
    const p = file(
      'bad.yaml',
      'version: "1.0"\ntype: cedarv1\ncedar:\n  policies:\n    - "permit(principal, action, resource);"\n    - |\n      permit(\n        principal,\n        actoin,\n        resource\n      );\n',
    );
    expectInvalid(p, /bad\.yaml:9:\d+: policy1: .*actoin/);
    const j = file('bad.json', '{\n  "version": "1.0",\n  "type": "cedarv1",\n  "cedar": {\n    "policies": [\n      "permit(principal, action, resource) when { context.x ==  };"\n    ]\n  }\n}\n');
    expectInvalid(j, /bad\.json:6:\d+: policy0: /);
  });
  it('bad entities JSON, string uids, unknown types, two policies in one string, bad syntax', () => {
    expectInvalid(file('e.json', '{"version":"1.0","type":"cedarv1",\n"cedar":{"policies":["permit(principal,action,resource);"],\n"entities_json":"[{]"}}'), /e\.json:3:\d+: entities_json: invalid JSON/);
    expectInvalid(
      file('s.json', '{"version":"1.0","type":"cedarv1","cedar":{"policies":["permit(principal,action,resource);"],"entities_json":"[{\\"uid\\":\\"Tool::weather\\"}]"}}'),
      /s\.json:1:\d+: entities_json: entity 0: uid: must be an object/,
    );
    expectInvalid(file('t.yaml', 'version: "1.0"\ntype: opa\ncedar:\n  policies: []\n'), /t\.yaml:2:7: unsupported authorizer type: "opa"/);
    expectInvalid(file('h.json', '{"version":"1.0","type":"httpv1","pdp":{}}'), /unsupported authorizer type/);
    expectInvalid(file('two.yaml', 'version: "1.0"\ntype: cedarv1\ncedar:\n  policies:\n    - "permit(principal,action,resource); forbid(principal,action,resource);"\n'), /two\.yaml:5:\d+: policy0: expected exactly one policy/);
    expectInvalid(file('empty.yaml', 'version: "1.0"\ntype: cedarv1\ncedar:\n  policies: []\n'), /empty\.yaml:4:\d+: at least one policy is required/);
    expectInvalid(file('nov.yaml', 'type: cedarv1\ncedar:\n  policies: ["permit(principal,action,resource);"]\n'), /version is required/);
    expectInvalid(file('syn.json', '{"version": "1.0",\n "type": "cedarv1",\n}'), /syn\.json:3:1: invalid JSON/);
    expectInvalid(file('syn.yaml', 'version: "1.0"\ntype: [cedarv1\n'), /syn\.yaml:\d+:\d+: invalid YAML/);
    expectInvalid(file('x.txt', '{}'), /must be a \.json, \.yaml or \.yml file/);
  });
  it('policyv1 in JSON with every option, and its errors placed on a line like cedarv1', () => {
    const ok = file(
      'p.json',
      JSON.stringify({
        version: '1.0',
        type: 'policyv1',
        policy: {
          policies: ['permit(principal in Team::"eng", action == Action::"call_tool", resource == Tool::"weather");'],
          entities_json: '[]',
          group_claim_name: 'team',
          role_claim_name: 'role',
          group_entity_type: 'Team',
          multi_valued_claims: ['scope'],
        },
      }),
    );
    const { authorizer: a, config: c } = loadAuthzFile(ok);
    assert.equal(c.type, 'policyv1');
    assert.deepEqual(c.options.multiValuedClaims, ['scope']);
    assert.equal(decide(a, tool('weather', { sub: 'a', team: ['eng'] })), 'allow');
    assert.equal(decide(a, tool('weather', { sub: 'a', role: ['eng'] })), 'allow', 'role_claim_name adds groups');
    assert.equal(decide(a, tool('weather', { sub: 'a', groups: ['eng'] })), 'allow', 'the configured claim is absent: groups is the fallback');
    assert.equal(decide(a, tool('weather', { sub: 'a', team: ['ops'], groups: ['eng'] })), 'deny', 'the configured claim wins over the fallback');
    expectInvalid(
      file('pbad.yaml', 'version: "1.0"\ntype: policyv1\npolicy:\n  policies:\n    - "permit(principal, action, resource);"\n    - "permit(principal, action == Action::call_tool, resource);"\n'),
      /pbad\.yaml:6:\d+: policy1: /,
    );
    expectInvalid(
      file('pent.json', '{\n  "version": "1.0",\n  "type": "policyv1",\n  "policy": {\n    "policies": ["permit(principal, action, resource);"],\n    "entities_json": "[{]"\n  }\n}\n'),
      /pent\.json:6:\d+: entities_json: invalid JSON/,
    );
    // The block must sit under the key of its type.
    expectInvalid(file('mixed.yaml', 'version: "1.0"\ntype: policyv1\ncedar:\n  policies: ["permit(principal, action, resource);"]\n'), /policy configuration is required for type policyv1/);
  });
  it('a stored config that fails is reported with the source file line when the file is there', () => {
    const p = file('stored.yaml', 'version: "1.0"\ntype: cedarv1\ncedar:\n  policies:\n    - "permit(principal, action, resourc);"\n');
    assert.throws(() => loadAuthzDoc({ version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action, resourc);'] } }, p), /stored\.yaml:5:\d+: policy0/);
    assert.throws(() => loadAuthzDoc({ version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action, resourc);'] } }), /policy0/);
  });
});

describe('fast path equals the engine', () => {
  it('agrees with the naive engine call on varied requests, including cache hits', () => {
    const a = authorizer(
      [
        'permit(principal in THVGroup::"eng", action == Action::"call_tool", resource) when { resource has readOnlyHint && resource.readOnlyHint };',
        'permit(principal, action == Action::"call_tool", resource == Tool::"t1") when { context.arg_q like "ok*" };',
        'forbid(principal, action, resource == Tool::"t2") when { context.claim_level.lessThan(decimal("3.0")) };',
        'permit(principal, action, resource == Tool::"t2");',
        'permit(principal, action == Action::"get_prompt", resource) when { principal.claim_email like "*@example.com" };',
        'permit(principal, action, resource == Tool::"t4") when { Client::"root".claim_x == "y" };',
        'permit(principal, action, resource) when { context == {} };',
      ],
      { entities_json: '[{"uid":{"type":"Client","id":"root"},"attrs":{"claim_x":"y"},"parents":[]}]' },
    );
    const principals = [
      { sub: 'a', groups: ['eng'], level: 5, email: 'a@example.com' },
      { sub: 'b', level: 1, email: 'b@other.org' },
      { sub: 'c', groups: ['ops'] },
      { sub: 'root' },
    ];
    let seed = 42;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let allows = 0;
    for (let i = 0; i < 600; i++) {
      const claims = principals[rnd(principals.length)]!;
      const name = `t${rnd(5)}`;
      const args = rnd(3) === 0 ? undefined : { q: ['ok1', 'no', 'ok2', 5][rnd(4)], other: rnd(1000) };
      const annotations = rnd(2) === 0 ? { readOnlyHint: rnd(2) === 0 } : undefined;
      const action = (['call_tool', 'get_prompt', 'read_resource'] as const)[rnd(3)]!;
      const d = decide(a, { claims, action, resourceId: name, arguments: args, annotations, serverName: 'srv' });
      if (d === 'allow') allows++;
    }
    assert.ok(allows > 50 && allows < 550, `a mix of decisions (${allows} allows)`);
    assert.ok(a.cachedDecisions > 0);
  });
});
