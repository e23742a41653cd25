/**
 * OAuth end to end (issue 7, point 2) with two real identity providers (oidc-provider over TLS): one
 * whose JWTs are verified locally, one whose opaque tokens only introspection can validate. Plus roles
 * and claims-based visibility under `auth.authz`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningRegistry } from '../../src/registry-server/server.js';
import { createTestCa, startTestIdp, type TestCa, type TestIdp } from '../helpers/oidc-provider.js';
import { createTestDatabase, getJson, makeServers, registryDocument, startInProcess, until, type TestDatabase } from './helpers.js';

describe('OAuth with two providers, roles and claims', () => {
  let dir: string;
  let ca: TestCa;
  let jwtIdp: TestIdp;
  let opaqueIdp: TestIdp;
  let strangerIdp: TestIdp;
  let tdb: TestDatabase;
  let reg: RunningRegistry;
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'thv-rs-oauth-'));
    ca = createTestCa();
    [jwtIdp, opaqueIdp, strangerIdp] = await Promise.all([
      startTestIdp({ ca, audience: 'api://registry' }),
      startTestIdp({ ca, audience: 'api://registry' }),
      startTestIdp({ ca, audience: 'api://registry' }),
    ]);
    tdb = await createTestDatabase();
    writeFileSync(join(dir, 'r.json'), registryDocument(makeServers(3)));
    writeFileSync(join(dir, 'secret'), `${opaqueIdp.introspection.clientSecret}\n`, { mode: 0o600 });
    reg = await startInProcess(
      `sources:
  - name: catalog
    file: { path: ${join(dir, 'r.json')} }
    syncPolicy: { interval: 1h }
    claims: { org: acme }
  - name: published
    managed: {}
    claims: { org: acme }
registries:
  - name: default
    sources: [catalog, published]
    claims: { org: acme }
  - name: elsewhere
    sources: [catalog]
    claims: { org: other }
  - name: open
    sources: [catalog]
auth:
  mode: oauth
  oauth:
    resourceUrl: https://registry.test
    publicPaths: [/registry/open/v0.1]
    providers:
      - name: jwt-idp
        issuerUrl: ${jwtIdp.issuer}
        audience: api://registry
        caCertPath: ${ca.caFile}
        allowPrivateIP: true
      - name: opaque-idp
        issuerUrl: ${opaqueIdp.issuer}
        audience: api://registry
        introspectionUrl: ${opaqueIdp.introspectionUrl}
        clientId: ${opaqueIdp.introspection.clientId}
        clientSecretFile: ${join(dir, 'secret')}
        caCertPath: ${ca.caFile}
        allowPrivateIP: true
  authz:
    roles:
      superAdmin: [{ groups: root }]
      manageEntries: [{ groups: eng }]
      manageSources: [{ groups: [eng, ops] }]
${tdb.yaml}`,
    );
    await until('synced', async () => (await getJson(`${reg.url}/v1/sources/catalog`, { headers: bearer(await jwtIdp.jwt('alice')) })).body?.syncStatus?.phase === 'complete');
  });

  after(async () => {
    await reg?.close();
    await Promise.all([jwtIdp?.close(), opaqueIdp?.close(), strangerIdp?.close()]);
    await tdb?.drop();
    ca?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it("each provider's tokens work: a JWT, and an opaque token through introspection", async () => {
    const jwt = await jwtIdp.jwt('alice');
    const r1 = await getJson(`${reg.url}/registry/default/v0.1/servers`, { headers: bearer(jwt) });
    assert.equal(r1.status, 200, JSON.stringify(r1.body));
    assert.equal(r1.body.metadata.count, 3);
    const opaque = await opaqueIdp.opaque('alice');
    assert.ok(!opaque.includes('.'), 'the second token is opaque');
    const r2 = await getJson(`${reg.url}/registry/default/v0.1/servers`, { headers: bearer(opaque) });
    assert.equal(r2.status, 200, JSON.stringify(r2.body));
    const me = await getJson(`${reg.url}/v1/me`, { headers: bearer(opaque) });
    assert.equal(me.status, 200);
    assert.deepEqual(me.body.roles, ['manageSources', 'manageEntries']);
  });

  it('a token from neither provider, an expired one, or none gets 401 with the header', async () => {
    const www = /^Bearer realm="mcp-registry", error="(invalid_token|invalid_request)", error_description="[^"]+", resource_metadata="https:\/\/registry.test\/.well-known\/oauth-protected-resource"$/;
    const stranger = await strangerIdp.jwt('alice');
    const expired = await jwtIdp.sign({ exp: Math.floor(Date.now() / 1000) - 60, aud: 'api://registry' });
    const strangerOpaque = await strangerIdp.opaque('alice');
    for (const [what, headers] of [
      ['stranger JWT', bearer(stranger)],
      ['stranger opaque', bearer(strangerOpaque)],
      ['expired', bearer(expired)],
      ['none', {}],
    ] as const) {
      const r = await getJson(`${reg.url}/registry/default/v0.1/servers`, { headers });
      assert.equal(r.status, 401, what);
      assert.match(r.headers.get('www-authenticate') ?? '', www, what);
      assert.equal(typeof r.body.error, 'string');
    }
  });

  it('public paths need no token; the metadata lists every issuer; /health is not on the main port', async () => {
    assert.equal((await getJson(`${reg.url}/openapi.json`)).status, 200);
    const open = await getJson(`${reg.url}/registry/open/v0.1/servers`);
    assert.equal(open.status, 200, 'a configured public path');
    assert.equal(open.body.metadata.count, 3);
    // As in the reference, a path with an encoded '/' is never public, even under a public prefix.
    assert.equal((await getJson(`${reg.url}/registry/open/v0.1/servers/io.test%2Fserver-00001/versions/latest`)).status, 401);
    const notPublic = await getJson(`${reg.url}/registry/openx/v0.1/servers`);
    assert.equal(notPublic.status, 401, 'whole segments only');
    assert.match(notPublic.headers.get('www-authenticate') ?? '', /^Bearer realm="mcp-registry", error="invalid_request"/);
    const meta = await getJson(`${reg.url}/.well-known/oauth-protected-resource`);
    assert.deepEqual(meta.body, { resource: 'https://registry.test', authorization_servers: [jwtIdp.issuer, opaqueIdp.issuer], bearer_methods_supported: ['header'] });
    assert.equal((await getJson(`${reg.url}/health`)).status, 401);
    assert.equal((await getJson(`${reg.url}/health`, { headers: bearer(await jwtIdp.jwt('alice')) })).status, 404);
    assert.equal((await getJson(`${reg.internalUrl}/health`)).status, 200);
  });

  it('roles: bob (sales) may read but not publish; registry claims gate with 403', async () => {
    const bob = await jwtIdp.jwt('bob');
    assert.deepEqual((await getJson(`${reg.url}/v1/me`, { headers: bearer(bob) })).body.roles, []);
    assert.equal((await getJson(`${reg.url}/registry/default/v0.1/servers`, { headers: bearer(bob) })).status, 200);
    const pub = await getJson(`${reg.url}/v1/entries`, {
      method: 'POST',
      headers: { ...bearer(bob), 'content-type': 'application/json' },
      body: JSON.stringify({ claims: { org: 'acme' }, server: { name: 'io.bob/x', version: '1.0.0', description: 'd' } }),
    });
    assert.equal(pub.status, 403);
    assert.deepEqual(pub.body, { error: 'forbidden: insufficient permissions' });
    assert.equal((await getJson(`${reg.url}/v1/sources`, { headers: bearer(bob) })).status, 403);
    const gate = await getJson(`${reg.url}/registry/elsewhere/v0.1/servers`, { headers: bearer(await jwtIdp.jwt('alice')) });
    assert.equal(gate.status, 403);
    assert.deepEqual(gate.body, { error: 'forbidden: insufficient claims for registry' });
    // The admin view hides what the caller cannot see.
    const regs = await getJson(`${reg.url}/v1/registries`, { headers: bearer(bob) });
    assert.deepEqual(regs.body.registries.map((r: any) => r.name), ['default']);
    assert.equal((await getJson(`${reg.url}/v1/registries/elsewhere`, { headers: bearer(bob) })).status, 404);
  });

  it('claims: an entry published for eng is invisible to sales', async () => {
    const alice = await jwtIdp.jwt('alice');
    const headers = { ...bearer(alice), 'content-type': 'application/json' };
    const body = (claims: unknown, version = '1.0.0') => JSON.stringify({ claims, server: { name: 'io.eng/tool', version, description: 'eng only' } });
    assert.equal((await getJson(`${reg.url}/v1/entries`, { method: 'POST', headers, body: JSON.stringify({ server: { name: 'io.eng/tool', version: '1', description: 'd' } }) })).status, 400, 'claims required under authz');
    assert.equal((await getJson(`${reg.url}/v1/entries`, { method: 'POST', headers, body: body({ groups: 'root' }) })).status, 403, 'claims the caller does not hold');
    const ok = await getJson(`${reg.url}/v1/entries`, { method: 'POST', headers, body: body({ groups: 'eng' }) });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const mismatch = await getJson(`${reg.url}/v1/entries`, { method: 'POST', headers, body: body({ groups: 'eng', org: 'acme' }, '2.0.0') });
    assert.equal(mismatch.status, 409);
    const seen = async (tok: string) =>
      (await getJson(`${reg.url}/registry/default/v0.1/servers?search=eng`, { headers: bearer(tok) })).body.servers.map((s: any) => s.server.name);
    assert.deepEqual(await seen(alice), ['io.eng/tool']);
    assert.deepEqual(await seen(await jwtIdp.jwt('bob')), []);
    assert.deepEqual(await seen(await opaqueIdp.opaque('alice')), ['io.eng/tool'], 'introspected claims count too');
    const claims = await getJson(`${reg.url}/v1/entries/server/io.eng%2Ftool/claims`, { headers: bearer(alice) });
    assert.deepEqual(claims.body, { claims: { groups: 'eng' } });
  });
});
