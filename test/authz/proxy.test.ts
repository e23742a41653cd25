import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localUserIdentity } from '../../src/auth/identity.js';
import { openSession, runThv, startThv, type RunningThv } from '../helpers/thv.js';
import { assertAgreement, CATALOG_SERVER, runnerDecisions, standardCases, throughProxy, writePolicyV1Json } from './shared.js';

/**
 * What it must show, 1 (without OIDC: the caller is the local user, as in ToolHive): the cases give
 * the same decisions through `thv authz test` and through a live `thv run --authz-config` proxy.
 */

describe('runner and live proxy agree (local user, no OIDC; the policyv1 shape, as JSON)', () => {
  let dir: string;
  let policies: string;
  let thv: RunningThv;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'thv-authz-proxy-'));
    // proxy-oidc.test.ts runs the cedarv1 YAML file; this one the same policies as policyv1 JSON.
    policies = writePolicyV1Json(dir);
    thv = await startThv(['run', '--runtime', 'process', '--foreground', '--authz-config', policies, CATALOG_SERVER]);
  });
  after(async () => {
    assert.equal(await thv.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives the same decisions for every case', async () => {
    const claims = localUserIdentity().claims;
    const cases = standardCases(claims);
    const runner = await runnerDecisions(dir, cases, [], policies);
    const sid = await openSession(thv.url);
    const headers = { 'mcp-session-id': sid };
    // The proxy learns tool annotations from the server's tools/list, as the runner's cases state them.
    const first = await throughProxy(thv.url, headers, cases.find((c) => c.request.method === 'tools/list')!, 1);
    assert.deepEqual(first.items, ['weather', 'search']);
    await assertAgreement(thv.url, headers, cases, runner);
  });
});

describe('thv run refuses an invalid authorization config', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'thv-authz-bad-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('stops with the parser message and the line, exit 2', async () => {
    const bad = join(dir, 'authz.yaml');
    writeFileSync(bad, 'version: "1.0"\ntype: cedarv1\ncedar:\n  policies:\n    - "permit(principal, action, resource);"\n    - "permit(principal, action == Action::call_tool, resource);"\n');
    const r = await runThv(['run', '--runtime', 'process', '--foreground', '--authz-config', bad, CATALOG_SERVER]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /authz\.yaml:6:\d+: policy1: /);
    const ents = join(dir, 'authz.json');
    writeFileSync(ents, '{\n  "version": "1.0",\n  "type": "cedarv1",\n  "cedar": {\n    "policies": ["permit(principal, action, resource);"],\n    "entities_json": "[{\\"uid\\": \\"Tool::weather\\"}]"\n  }\n}\n');
    const r2 = await runThv(['run', '--runtime', 'process', '--foreground', '--authz-config', ents, CATALOG_SERVER]);
    assert.equal(r2.code, 2, r2.stderr);
    assert.match(r2.stderr, /authz\.json:6:\d+: entities_json: entity 0: uid/);
    const type = join(dir, 'type.json');
    writeFileSync(type, '{\n  "version": "1.0",\n  "type": "opa"\n}\n');
    const r3 = await runThv(['run', '--runtime', 'process', '--foreground', '--authz-config', type, CATALOG_SERVER]);
    assert.equal(r3.code, 2, r3.stderr);
    assert.match(r3.stderr, /type\.json:3:\d+: unsupported authorizer type: "opa"/);
    const syntax = join(dir, 'syntax.json');
    writeFileSync(syntax, '{\n  "version": "1.0",\n  "type": "cedarv1",\n}\n');
    const r4 = await runThv(['run', '--runtime', 'process', '--foreground', '--authz-config', syntax, CATALOG_SERVER]);
    assert.equal(r4.code, 2, r4.stderr);
    assert.match(r4.stderr, /syntax\.json:4:1: invalid JSON/);
    const v1 = join(dir, 'policyv1.yml');
    writeFileSync(v1, 'version: "1.0"\ntype: policyv1\npolicy:\n  policies:\n    - |\n      permit(\n        principal,\n        actoin,\n        resource\n      );\n');
    const r5 = await runThv(['run', '--runtime', 'process', '--foreground', '--authz-config', v1, CATALOG_SERVER]);
    assert.equal(r5.code, 2, r5.stderr);
    assert.match(r5.stderr, /policyv1\.yml:8:\d+: policy0: .*actoin/);
  });
});
