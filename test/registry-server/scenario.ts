/**
 * The end-to-end scenario run against both backends (issue 7, point 1): sync from a file, from a git
 * repository made here, and from an upstream registry served by a second instance of this service;
 * then list, page, search and fetch versions through the HTTP API.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/registry-server/db/db.js';
import type { RunningRegistry } from '../../src/registry-server/server.js';
import { createTestDatabase, getJson, listAll, makeGitRepo, makeServers, registryDocument, serveGitHttp, startInProcess, until, type TestDatabase } from './helpers.js';

export interface Backend {
  /** The `database:` YAML of the main instance, and optionally a shared Db (PGlite). */
  main(): Promise<{ yaml: string; db?: Db; cleanup(): Promise<void> }>;
}

export function e2eScenario(label: string, backend: Backend): void {
  describe(`registry service end to end (${label})`, () => {
    let dir: string;
    let upstreamDb: TestDatabase;
    let upstream: RunningRegistry;
    let main: RunningRegistry;
    let mainCleanup: () => Promise<void> = async () => undefined;
    let fileDoc: string;
    let gitIds: string[];
    let gitHttp: Awaited<ReturnType<typeof serveGitHttp>>;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'thv-rs-e2e-'));
      // Upstream: a second instance of this service on its own PostgreSQL database, 25 servers x 2 versions.
      upstreamDb = await createTestDatabase();
      writeFileSync(join(dir, 'upstream.json'), registryDocument(makeServers(25, 'io.upstream', 2)));
      upstream = await startInProcess(
        `sources:\n  - name: up\n    file: { path: ${join(dir, 'upstream.json')} }\n    syncPolicy: { interval: 1h }\nregistries:\n  - name: default\n    sources: [up]\nauth: { mode: anonymous }\n${upstreamDb.yaml}`,
      );
      await until('upstream synced', async () => (await getJson(`${upstream.url}/registry/default/v0.1/servers?limit=1`)).body?.metadata?.count === 1);

      fileDoc = registryDocument([
        { name: 'io.example/alpha', version: '1.0.0', description: 'Alpha server', title: 'Alpha' },
        { name: 'io.example/alpha', version: '1.10.0', description: 'Alpha server' },
        { name: 'io.example/alpha', version: '1.9.0', description: 'Alpha server' },
        { name: 'io.example/beta', version: '0.1.0', description: 'Beta: 50% off_sale', remotes: [{ type: 'streamable-http', url: 'https://beta.example/mcp' }] },
        { name: 'io.shared/dup', version: '2.0.0', description: 'from the file source' },
      ]);
      writeFileSync(join(dir, 'registry.json'), fileDoc);
      // Tags live in the publisher-provided _meta block, under the publisher's namespace.
      const tagged = (name: string, tags: string[]) => ({
        name,
        version: '1.0.0',
        description: `tags ${tags.join(' ')}`,
        _meta: { 'io.modelcontextprotocol.registry/publisher-provided': { 'io.github.stacklok': { [`ghcr.io/${name}`]: { tags } } } },
      });
      writeFileSync(
        join(dir, 'tagged.json'),
        registryDocument([
          tagged('io.tags/prod-a', ['prod', 'search']),
          tagged('io.tags/prod-old', ['prod', 'deprecated']),
          tagged('io.tags/dev-b', ['dev']),
          tagged('io.tags/untagged', []),
          tagged('io.other/prod-c', ['prod']),
        ]),
      );
      gitIds = makeGitRepo(join(dir, 'repo'), [
        { files: { 'data/registry.json': registryDocument([{ name: 'io.git/one', version: '1.0.0', description: 'first commit' }, { name: 'io.shared/dup', version: '0.5.0', description: 'from git' }]) }, tag: 'v1' },
        { files: { 'data/registry.json': registryDocument([{ name: 'io.git/one', version: '2.0.0', description: 'second commit' }]) } },
      ]);
      gitHttp = await serveGitHttp(dir, 'reader', 's3cret pass');
      writeFileSync(join(dir, 'git-password'), 's3cret pass\n', { mode: 0o600 });
      const m = await backend.main();
      mainCleanup = m.cleanup;
      main = await startInProcess(
        `sources:
  - name: local-file
    file: { path: ${join(dir, 'registry.json')} }
    syncPolicy: { interval: 1h }
  - name: git-tag
    git: { repository: ${join(dir, 'repo')}, tag: v1, path: data/registry.json }
    syncPolicy: { interval: 1h }
  - name: git-main
    git: { repository: ${join(dir, 'repo')}, branch: main, path: data/registry.json }
    syncPolicy: { interval: 1h }
  - name: git-commit
    git: { repository: "file://${join(dir, 'repo')}", commit: "${gitIds[0]!.slice(0, 12)}", path: data/registry.json }
    syncPolicy: { interval: 1h }
  - name: git-http
    git:
      repository: ${gitHttp.url}/repo
      branch: main
      path: data/registry.json
      auth: { username: reader, passwordFile: ${join(dir, 'git-password')} }
    syncPolicy: { interval: 1h }
  - name: upstream
    api: { endpoint: ${upstream.url}/registry/default }
    syncPolicy: { interval: 1h }
    filter: { names: { exclude: ["io.upstream/server-0002*"] } }
  - name: tagged
    file: { path: ${join(dir, 'tagged.json')} }
    syncPolicy: { interval: 1h }
    filter: { names: { include: ["io.tags/*"] }, tags: { include: [prod, dev], exclude: [deprecated] } }
  - name: published
    managed: {}
registries:
  - name: tagged
    sources: [tagged]
  - name: default
    sources: [local-file, git-tag]
  - name: git-head
    sources: [git-main]
  - name: git-pinned
    sources: [git-commit]
  - name: git-remote
    sources: [git-http]
  - name: upstream
    sources: [upstream]
  - name: all
    sources: [git-tag, local-file, upstream, published]
auth: { mode: anonymous }
${m.yaml}`,
        { db: m.db },
      );
      await until(
        'every source synced',
        async () => {
          const r = await getJson(`${main.url}/v1/sources`);
          const syncable = r.body.sources.filter((s: any) => s.type !== 'managed');
          const failed = syncable.find((s: any) => s.syncStatus.phase === 'failed' && s.syncStatus.message !== 'No previous sync status found');
          if (failed) throw new Error(`source ${failed.name} failed: ${failed.syncStatus.message}`);
          return syncable.every((s: any) => s.syncStatus.phase === 'complete');
        },
        60_000,
      );
    });

    after(async () => {
      await main?.close();
      await upstream?.close();
      await gitHttp?.close();
      await mainCleanup();
      await upstreamDb?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('lists every version from a file source with the official _meta block', async () => {
      const r = await getJson(`${main.url}/registry/default/v0.1/servers`);
      assert.equal(r.status, 200);
      const names = r.body.servers.map((s: any) => `${s.server.name}@${s.server.version}`);
      assert.deepEqual(names, ['io.example/alpha@1.0.0', 'io.example/alpha@1.10.0', 'io.example/alpha@1.9.0', 'io.example/beta@0.1.0', 'io.git/one@1.0.0', 'io.shared/dup@2.0.0']);
      const alpha = r.body.servers.find((s: any) => s.server.version === '1.10.0');
      const official = alpha._meta['io.modelcontextprotocol.registry/official'];
      assert.equal(official.isLatest, true, 'semver, not text, decides the latest');
      assert.equal(official.status, 'active');
      assert.ok(!Number.isNaN(Date.parse(official.publishedAt)) && !Number.isNaN(Date.parse(official.updatedAt)));
      assert.equal(r.body.metadata.count, 6);
      assert.equal(r.body.metadata.nextCursor, undefined);
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    });

    it('serves the higher-priority source for a name, whatever the version order', async () => {
      // git-tag has io.shared/dup@0.5.0 which sorts before 2.0.0; local-file comes first in `default`.
      const v = await getJson(`${main.url}/registry/default/v0.1/servers/io.shared%2Fdup/versions`);
      assert.equal(v.status, 200);
      assert.deepEqual(v.body.servers.map((s: any) => s.server.description), ['from the file source']);
      // In `all`, git-tag comes first.
      const w = await getJson(`${main.url}/registry/all/v0.1/servers/io.shared%2Fdup/versions`);
      assert.deepEqual(w.body.servers.map((s: any) => s.server.description), ['from git']);
    });

    it('version=latest, versions, a single version, latest by name', async () => {
      const latest = await getJson(`${main.url}/registry/default/v0.1/servers?version=latest`);
      assert.deepEqual(latest.body.servers.map((s: any) => `${s.server.name}@${s.server.version}`), ['io.example/alpha@1.10.0', 'io.example/beta@0.1.0', 'io.git/one@1.0.0', 'io.shared/dup@2.0.0']);
      const versions = await getJson(`${main.url}/registry/default/v0.1/servers/io.example%2Falpha/versions`);
      assert.equal(versions.body.metadata.count, 3);
      const one = await getJson(`${main.url}/registry/default/v0.1/servers/io.example%2Falpha/versions/1.9.0`);
      assert.equal(one.status, 200);
      assert.equal(one.body.server.version, '1.9.0');
      assert.equal(one.body._meta['io.modelcontextprotocol.registry/official'].isLatest, false);
      const l = await getJson(`${main.url}/registry/default/v0.1/servers/io.example%2Falpha/versions/latest`);
      assert.equal(l.body.server.version, '1.10.0');
      const missing = await getJson(`${main.url}/registry/default/v0.1/servers/io.example%2Falpha/versions/9.9.9`);
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.body, { error: 'not found' });
      const unknown = await getJson(`${main.url}/registry/default/v0.1/servers/io.example%2Fnope/versions`);
      assert.equal(unknown.status, 404);
      const noReg = await getJson(`${main.url}/registry/nope/v0.1/servers`);
      assert.equal(noReg.status, 404);
      assert.deepEqual(noReg.body, { error: 'registry not found' });
    });

    it('searches name, title and description, case-insensitively, with literal % and _', async () => {
      const s = async (q: string) => (await getJson(`${main.url}/registry/default/v0.1/servers?search=${encodeURIComponent(q)}`)).body.servers.map((x: any) => x.server.name);
      assert.deepEqual(await s('ALPHA'), ['io.example/alpha', 'io.example/alpha', 'io.example/alpha']);
      assert.deepEqual(await s('50% off_'), ['io.example/beta']);
      assert.deepEqual(await s('%'), ['io.example/beta']);
      assert.deepEqual(await s('_'), ['io.example/beta']);
      // Filters apply before shadowing (as in the reference): the file copy does not match, so the
      // lower-priority git copy is what the search finds.
      assert.deepEqual(await s('from git'), ['io.shared/dup']);
    });

    it('syncs a git repository at a tag, a branch head and a pinned commit', async () => {
      const head = await getJson(`${main.url}/registry/git-head/v0.1/servers`);
      assert.deepEqual(head.body.servers.map((s: any) => `${s.server.name}@${s.server.version}`), ['io.git/one@2.0.0']);
      const remote = await getJson(`${main.url}/registry/git-remote/v0.1/servers`);
      assert.deepEqual(remote.body.servers.map((s: any) => `${s.server.name}@${s.server.version}`), ['io.git/one@2.0.0'], 'cloned over smart HTTP with basic auth');
      assert.ok(gitHttp.requests() >= 2);
      const pinned = await getJson(`${main.url}/registry/git-pinned/v0.1/servers`);
      assert.deepEqual(pinned.body.servers.map((s: any) => `${s.server.name}@${s.server.version}`), ['io.git/one@1.0.0', 'io.shared/dup@0.5.0']);
    });

    it('syncs from an upstream registry API across its pages, applying the name filter', async () => {
      const { servers, pages } = await listAll(`${main.url}/registry/upstream`);
      // 25 names x 2 versions, minus server-00020..00024 (10 versions) excluded by the filter.
      assert.equal(servers.length, 40);
      assert.equal(pages, 6);
      const keys = servers.map((s: any) => `${s.server.name}@${s.server.version}`);
      assert.equal(new Set(keys).size, 40, 'no duplicates across pages');
      assert.deepEqual(keys, [...keys].sort(), 'pages come in name order');
      assert.ok(!keys.some((k: string) => k.startsWith('io.upstream/server-0002')));
      // The upstream's official block is ours to compute, not copied.
      assert.equal(servers[0]._meta['io.modelcontextprotocol.registry/official'].isLatest, false);
    });

    it('applies name and tag filters: include globs, tag overlap, exclude wins', async () => {
      const r = await getJson(`${main.url}/registry/tagged/v0.1/servers`);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.servers.map((s: any) => s.server.name), ['io.tags/dev-b', 'io.tags/prod-a']);
      const src = await getJson(`${main.url}/v1/sources/tagged`);
      assert.equal(src.body.syncStatus.serverCount, 2);
    });

    it('pages through a multi-source registry with no gaps or repeats', async () => {
      const { servers } = await listAll(`${main.url}/registry/all`);
      const keys = servers.map((s: any) => `${s.server.name}@${s.server.version}`);
      assert.equal(new Set(keys).size, keys.length);
      assert.equal(keys.length, 40 + 6);
      const latest = await listAll(`${main.url}/registry/all`, 'version=latest');
      assert.equal(latest.servers.length, 20 + 4);
    });

    it('resyncs only what changed: updated_since sees just the new version', async () => {
      const before = new Date().toISOString();
      const doc = JSON.parse(fileDoc);
      doc.data.servers.push({ name: 'io.example/gamma', version: '0.0.1', description: 'new one' });
      writeFileSync(join(dir, 'registry.json'), JSON.stringify(doc));
      // A source edited through the API-free path: force the file source to sync now.
      assert.equal(await main.sync.syncOne('local-file', true), 'synced');
      assert.equal(await main.sync.syncOne('local-file', true), 'unchanged');
      const r = await getJson(`${main.url}/registry/default/v0.1/servers?updated_since=${encodeURIComponent(before)}`);
      assert.deepEqual(r.body.servers.map((s: any) => s.server.name), ['io.example/gamma']);
      const src = await getJson(`${main.url}/v1/sources/local-file`);
      assert.equal(src.body.syncStatus.phase, 'complete');
      assert.equal(src.body.syncStatus.serverCount, 6);
    });

    it('publishes into the managed source and serves it', async () => {
      const pub = await getJson(`${main.url}/v1/entries`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ server: { name: 'io.pub/tool', version: '1.0.0', description: 'published' } }),
      });
      assert.equal(pub.status, 201, JSON.stringify(pub.body));
      const again = await getJson(`${main.url}/v1/entries`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ server: { name: 'io.pub/tool', version: '1.0.0', description: 'published' } }),
      });
      assert.equal(again.status, 409);
      assert.deepEqual(again.body, { error: 'version already exists: io.pub/tool@1.0.0' });
      const got = await getJson(`${main.url}/registry/all/v0.1/servers/io.pub%2Ftool/versions/latest`);
      assert.equal(got.status, 200);
      assert.equal(got.body.server.description, 'published');
      const del = await fetch(`${main.url}/v1/entries/server/io.pub%2Ftool/versions/1.0.0`, { method: 'DELETE' });
      assert.equal(del.status, 204);
      assert.equal((await getJson(`${main.url}/registry/all/v0.1/servers/io.pub%2Ftool/versions/latest`)).status, 404);
    });

    it('answers health, readiness and version only on the internal server', async () => {
      assert.deepEqual((await getJson(`${main.internalUrl}/health`)).body, { status: 'healthy' });
      assert.deepEqual((await getJson(`${main.internalUrl}/readiness`)).body, { status: 'ready' });
      assert.ok((await getJson(`${main.internalUrl}/version`)).body.version);
      for (const p of ['/health', '/readiness', '/version']) assert.equal((await getJson(`${main.url}${p}`)).status, 404);
    });
  });
}
