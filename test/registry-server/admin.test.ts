/**
 * The admin API `/v1` end to end (anonymous mode, real PostgreSQL): API-created sources and
 * registries (create 201, update 200, synced by the coordinator, deleted in order), CONFIG ones
 * read-only, one managed source at most, and the claims of a published entry.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningRegistry } from '../../src/registry-server/server.js';
import { createTestDatabase, getJson, makeServers, registryDocument, startInProcess, until, type TestDatabase } from './helpers.js';

describe('admin API', () => {
  let dir: string;
  let tdb: TestDatabase;
  let reg: RunningRegistry;
  const send = (method: string, path: string, body?: unknown) =>
    getJson(`${reg.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const names = async (registry: string) => (await getJson(`${reg.url}/registry/${registry}/v0.1/servers?limit=100`)).body.servers.map((s: any) => `${s.server.name}@${s.server.version}`);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'thv-rs-admin-'));
    tdb = await createTestDatabase();
    writeFileSync(join(dir, 'cfg.json'), registryDocument(makeServers(2, 'io.cfg')));
    writeFileSync(join(dir, 'a.json'), registryDocument(makeServers(3, 'io.api')));
    writeFileSync(join(dir, 'b.json'), registryDocument(makeServers(1, 'io.api', 2)));
    reg = await startInProcess(
      `sources:\n  - name: cfg\n    file: { path: ${join(dir, 'cfg.json')} }\n    syncPolicy: { interval: 1h }\n  - name: pub\n    managed: {}\nregistries:\n  - name: default\n    sources: [cfg, pub]\nauth: { mode: anonymous }\n${tdb.yaml}`,
      { maxTickMs: 300 },
    );
    await until('config source synced', async () => (await names('default')).length === 2);
  });

  after(async () => {
    await reg?.close();
    await tdb?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates, syncs, updates and deletes an API source and an API registry', async () => {
    const created = await send('PUT', '/v1/sources/extra', { file: { path: join(dir, 'a.json') }, syncPolicy: { interval: '1h' }, filter: { names: { exclude: ['*-00002'] } } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.creationType, 'API');
    assert.equal(created.body.type, 'file');
    assert.equal(created.body.syncSchedule, '1h0m0s');
    await until('API source synced', async () => (await getJson(`${reg.url}/v1/sources/extra`)).body.syncStatus.phase === 'complete');
    assert.equal((await getJson(`${reg.url}/v1/sources/extra`)).body.syncStatus.serverCount, 2);

    const r = await send('PUT', '/v1/registries/mine', { sources: ['extra', 'cfg'] });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body.sources, ['extra', 'cfg']);
    assert.equal(r.body.creationType, 'API');
    assert.deepEqual(await names('mine'), ['io.api/server-00000@1.0.0', 'io.api/server-00001@1.0.0', 'io.cfg/server-00000@1.0.0', 'io.cfg/server-00001@1.0.0']);
    const entries = await getJson(`${reg.url}/v1/registries/mine/entries`);
    assert.equal(entries.body.entries.length, 4);
    assert.deepEqual(new Set(entries.body.entries.map((e: any) => e.sourceName)), new Set(['extra', 'cfg']));
    const again = await send('PUT', '/v1/registries/mine', { sources: ['extra'] });
    assert.equal(again.status, 200);
    assert.equal((await names('mine')).length, 2);

    // Update: new file, no filter; the next sync serves the new data.
    const updated = await send('PUT', '/v1/sources/extra', { file: { path: join(dir, 'b.json') }, syncPolicy: { interval: '1h' } });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    await until('resynced after the update', async () => JSON.stringify(await names('mine')) === JSON.stringify(['io.api/server-00000@1.0.0', 'io.api/server-00000@1.1.0']));
    const srcEntries = await getJson(`${reg.url}/v1/sources/extra/entries`);
    assert.deepEqual(srcEntries.body.entries.map((e: any) => [e.name, e.versions.map((v: any) => v.version)]), [['io.api/server-00000', ['1.0.0', '1.1.0']]]);
    assert.equal((await send('PUT', '/v1/sources/extra', { api: { endpoint: 'http://127.0.0.1:1' }, syncPolicy: { interval: '1h' } })).status, 400, 'type change');

    // Delete: refused while referenced, then registry, then source.
    const busy = await send('DELETE', '/v1/sources/extra');
    assert.equal(busy.status, 409);
    assert.match(busy.body.error, /referenced by 1 registry/);
    assert.equal((await send('DELETE', '/v1/registries/mine')).status, 204);
    assert.equal((await getJson(`${reg.url}/registry/mine/v0.1/servers`)).status, 404);
    assert.equal((await send('DELETE', '/v1/sources/extra')).status, 204);
    assert.equal((await getJson(`${reg.url}/v1/sources/extra`)).status, 404);
  });

  it('CONFIG sources and registries are read-only; one managed source at most', async () => {
    const put = await send('PUT', '/v1/sources/cfg', { file: { path: join(dir, 'a.json') }, syncPolicy: { interval: '1h' } });
    assert.equal(put.status, 403);
    assert.deepEqual(put.body, { error: 'cannot modify config-created source via API: cfg' });
    assert.equal((await send('DELETE', '/v1/sources/cfg')).status, 403);
    assert.deepEqual((await send('PUT', '/v1/registries/default', { sources: ['cfg'] })).body, { error: 'cannot modify config-created registry via API: default' });
    assert.equal((await send('DELETE', '/v1/registries/default')).status, 403);
    const managed = await send('PUT', '/v1/sources/pub2', { managed: {} });
    assert.equal(managed.status, 409);
    assert.deepEqual(managed.body, { error: 'at most one managed source is allowed' });
    const list = await getJson(`${reg.url}/v1/sources`);
    assert.deepEqual(list.body.sources.map((s: any) => [s.name, s.creationType, s.type]), [['cfg', 'CONFIG', 'file'], ['pub', 'CONFIG', 'managed']]);
  });

  it('publishes, reads and replaces the claims of a published entry', async () => {
    const pub = await send('POST', '/v1/entries', { claims: { team: 'a' }, server: { name: 'io.pub/tool', version: '1.0.0', description: 'published' } });
    assert.equal(pub.status, 201, JSON.stringify(pub.body));
    const newer = await send('POST', '/v1/entries', { claims: { team: 'a' }, server: { name: 'io.pub/tool', version: '1.2.0', description: 'published' } });
    assert.equal(newer.status, 201);
    assert.equal((await send('POST', '/v1/entries', { claims: { team: 'b' }, server: { name: 'io.pub/tool', version: '2.0.0', description: 'x' } })).status, 409, 'claims fixed by the first publish');
    assert.deepEqual((await getJson(`${reg.url}/v1/entries/server/io.pub%2Ftool/claims`)).body, { claims: { team: 'a' } });
    assert.equal((await send('PUT', '/v1/entries/server/io.pub%2Ftool/claims', { claims: { team: ['a', 'b'] } })).status, 204);
    assert.deepEqual((await getJson(`${reg.url}/v1/entries/server/io.pub%2Ftool/claims`)).body, { claims: { team: ['a', 'b'] } });
    const latest = await getJson(`${reg.url}/registry/default/v0.1/servers/io.pub%2Ftool/versions/latest`);
    assert.equal(latest.body.server.version, '1.2.0');
    // Deleting the latest version promotes the previous one.
    assert.equal((await send('DELETE', '/v1/entries/server/io.pub%2Ftool/versions/1.2.0')).status, 204);
    assert.equal((await getJson(`${reg.url}/registry/default/v0.1/servers/io.pub%2Ftool/versions/latest`)).body.server.version, '1.0.0');
    assert.equal((await send('DELETE', '/v1/entries/server/io.pub%2Ftool/versions/1.2.0')).status, 404);
    assert.equal((await getJson(`${reg.url}/v1/sources/pub`)).body.syncStatus.serverCount, 1);
  });
});
