import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSession, post, startThv, type RunningThv } from '../helpers/thv.js';
import { startTestIdp, type TestIdp } from '../helpers/oidc-provider.js';
import { assertAgreement, CATALOG_SERVER, POLICIES, runnerDecisions, standardCases, throughProxy } from './shared.js';

/**
 * What it must show, 1, with real tokens: `thv run --oidc-* --authz-config` against a real OpenID
 * provider (TLS). The runner gets exactly the claims of each caller's access token; both paths must
 * give the same decisions (groups from the token: eng for alice, ops → THVRole admin for carol).
 */

function claimsOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe('runner and live proxy agree (real OIDC tokens)', () => {
  let idp: TestIdp;
  let thv: RunningThv;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'thv-authz-oidc-'));
    idp = await startTestIdp({
      users: {
        alice: { claims: { name: 'Alice', email: 'alice@example.test', groups: ['eng'] } },
        carol: { claims: { name: 'Carol', email: 'carol@example.test', groups: ['ops'] } },
      },
    });
    thv = await startThv([
      'run', '--runtime', 'process', '--foreground',
      '--oidc-issuer', idp.issuer,
      '--oidc-audience', idp.audience,
      '--thv-ca-bundle', idp.caFile,
      '--jwks-allow-private-ip',
      '--authz-config', POLICIES,
      CATALOG_SERVER,
    ]);
  });
  after(async () => {
    const code = await thv?.stop();
    await idp?.close();
    rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0);
  });

  it('without a token the proxy answers 401 before authorization', async () => {
    const res = await post(thv.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'weather' } });
    assert.equal(res.status, 401);
    await res.text();
  });

  for (const [user, opts] of [['alice', { eng: true }], ['carol', { admin: true }]] as const) {
    it(`gives the same decisions for ${user}`, async () => {
      const token = await idp.jwt(user);
      const claims = claimsOf(token);
      assert.equal(claims['sub'], user);
      const cases = standardCases(claims, opts).map((c) => ({ ...c, name: `${user}: ${c.name}` }));
      const runner = await runnerDecisions(dir, cases);
      const auth = { authorization: `Bearer ${token}` };
      const sid = await openSession(thv.url, auth);
      const headers = { ...auth, 'mcp-session-id': sid };
      // Teach the proxy the tools' annotations (the runner's cases carry them).
      await throughProxy(thv.url, headers, cases.find((c) => c.request.method === 'tools/list')!, 1);
      await assertAgreement(thv.url, headers, cases, runner);
    });
  }
});
