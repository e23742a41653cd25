/**
 * Hostile input (issue 7, point 5): bad cursors, huge limits, malformed names, traversal in public
 * paths, oversized bodies and invalid configurations get a 4xx with a JSON error (or a clear start-up
 * error), never a 500 or a crash.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningRegistry } from '../../src/registry-server/server.js';
import { createTestDatabase, getJson, makeServers, registryDocument, spawnCli, startInProcess, until, type TestDatabase } from './helpers.js';

/** A request whose path is sent exactly as written (fetch would normalise `..` and `//`). */
function rawRequest(base: string, method: string, path: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers: { ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data, headers: res.headers }));
    });
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

function assertJsonError(r: { status: number; body: string }, status: number, what: string): any {
  assert.equal(r.status, status, `${what}: expected ${status}, got ${r.status} ${r.body.slice(0, 200)}`);
  const parsed = JSON.parse(r.body);
  assert.equal(typeof parsed.error, 'string', `${what}: JSON error body`);
  return parsed;
}

describe('hostile input', () => {
  let dir: string;
  let tdb: TestDatabase;
  let anon: RunningRegistry;
  let oauth: RunningRegistry;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'thv-rs-hostile-'));
    tdb = await createTestDatabase();
    writeFileSync(join(dir, 'r.json'), registryDocument(makeServers(12)));
    const common = `sources:\n  - name: f\n    file: { path: ${join(dir, 'r.json')} }\n    syncPolicy: { interval: 1h }\n  - name: m\n    managed: {}\nregistries:\n  - name: default\n    sources: [f, m]\n${tdb.yaml}`;
    anon = await startInProcess(`${common}auth: { mode: anonymous }\n`);
    await until('synced', async () => (await getJson(`${anon.url}/registry/default/v0.1/servers?limit=1`)).body?.metadata?.count === 1);
    // Same database, oauth mode with an unreachable provider: nothing but public paths can pass.
    oauth = await startInProcess(
      `${common}auth:\n  mode: oauth\n  publicPaths: [/docs, /registry/default/v0.1/servers]\n  oauth:\n    resourceUrl: https://registry.test\n    providers:\n      - name: nowhere\n        issuerUrl: https://127.0.0.1:9\n        audience: x\n`,
      { noSync: true },
    );
  });
  after(async () => {
    await oauth?.close();
    await anon?.close();
    await tdb?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('bad cursors are 400', async () => {
    const bad = ['!!!', 'bm90IGpzb24', Buffer.from('{"a":1}').toString('base64url'), Buffer.from('["a","b","c"]').toString('base64url'), 'A'.repeat(5000), '%00', '..%2F..'];
    for (const c of bad) {
      const r = await rawRequest(anon.url, 'GET', `/registry/default/v0.1/servers?cursor=${encodeURIComponent(c)}`);
      assertJsonError(r, 400, `cursor ${c.slice(0, 20)}`);
    }
  });

  it('limits: huge values are clamped, nonsense is 400', async () => {
    const huge = await rawRequest(anon.url, 'GET', '/registry/default/v0.1/servers?limit=99999999999999999999999');
    assert.equal(huge.status, 200);
    assert.equal(JSON.parse(huge.body).metadata.count, 12);
    for (const l of ['0', '-1', '1.5', 'abc', '1e3', '0x10', ' ']) {
      assertJsonError(await rawRequest(anon.url, 'GET', `/registry/default/v0.1/servers?limit=${encodeURIComponent(l)}`), 400, `limit ${l}`);
    }
    assertJsonError(await rawRequest(anon.url, 'GET', '/registry/default/v0.1/servers?updated_since=yesterday'), 400, 'updated_since');
    assertJsonError(await rawRequest(anon.url, 'GET', `/registry/default/v0.1/servers?search=${'x'.repeat(5000)}`), 400, 'search');
  });

  it('malformed names and versions are 400, unknown ones 404', async () => {
    const cases: Array<[string, number]> = [
      ['/registry/default/v0.1/servers/noslash/versions', 400],
      ['/registry/default/v0.1/servers/a%2Fb%2Fc/versions', 400],
      ['/registry/default/v0.1/servers/%ZZ/versions', 400],
      ['/registry/default/v0.1/servers/io.x%2F%20y/versions', 400],
      ['/registry/default/v0.1/servers/io.x%2Fy%00/versions', 400],
      [`/registry/default/v0.1/servers/io.x%2F${'y'.repeat(300)}/versions`, 400],
      ['/registry/default/v0.1/servers/-bad%2Fname/versions', 400],
      ['/registry/default/v0.1/servers/io.test%2Fserver-00001/versions/1.0.0%00', 400],
      ['/registry/default/v0.1/servers/io.test%2Fserver-00001/versions/%E0%A4%A', 400],
      ['/registry/default/v0.1/servers/io.test%2Fserver-00001/versions/9.9', 404],
      ['/registry/%2e%2e/v0.1/servers', 404],
      ['/registry/default/v0.1/servers/io.test%2Fserver-00001/versions/1.0.0/extra/segments', 404],
      ['/nowhere', 404],
      ['/v1/entries/server/io.x%2Fy/versions/1.0.0/more', 404],
      ['/v1/entries/bogus/io.x%2Fy/claims', 400],
    ];
    for (const [path, status] of cases) assertJsonError(await rawRequest(anon.url, 'GET', path), status, path);
    assertJsonError(await rawRequest(anon.url, 'DELETE', '/v1/entries/bogus/x/versions/1'), 400, 'delete bogus type');
  });

  it('bodies: oversized is 413, broken JSON and wrong shapes are 400', async () => {
    const big = JSON.stringify({ server: { name: 'io.x/y', version: '1.0.0', description: 'x'.repeat(2 * 1024 * 1024) } });
    assertJsonError(await rawRequest(anon.url, 'POST', '/v1/entries', big, { 'content-type': 'application/json' }), 413, 'oversized');
    const shapes = ['{', '[]', '"x"', 'null', '{}', '{"server":{}}', '{"server":{"name":"bad","version":"1","description":"d"}}', '{"server":{"name":"io.x/y","version":"1 0","description":"d"}}', '{"server":{"name":"io.x/y","version":"1","description":"d"},"skill":{}}', '{"claims":{"a":1},"server":{"name":"io.x/y","version":"1","description":"d"}}'];
    for (const b of shapes) assertJsonError(await rawRequest(anon.url, 'POST', '/v1/entries', b, { 'content-type': 'application/json' }), 400, `body ${b}`);
    const srcBodies = ['{', '{}', '{"git":{}}', '{"file":{"path":"/x"}}', '{"file":{"path":"/x","url":"http://y"},"syncPolicy":{"interval":"1m"}}', '{"api":{"endpoint":"ftp://x"},"syncPolicy":{"interval":"1m"}}', '{"file":{"path":"/x"},"syncPolicy":{"interval":"soon"}}'];
    for (const b of srcBodies) assertJsonError(await rawRequest(anon.url, 'PUT', '/v1/sources/api-src', b, { 'content-type': 'application/json' }), 400, `source ${b}`);
    assertJsonError(await rawRequest(anon.url, 'PUT', '/v1/sources/Bad_Name', '{"managed":{}}', { 'content-type': 'application/json' }), 400, 'source name');
    assertJsonError(await rawRequest(anon.url, 'PUT', '/v1/registries/r', '{"sources":["nope"]}', { 'content-type': 'application/json' }), 400, 'registry unknown source');
    assertJsonError(await rawRequest(anon.url, 'PUT', '/v1/registries/r', '{"sources":[]}', { 'content-type': 'application/json' }), 400, 'registry no source');
  });

  it('traversal never reaches a protected path through a public one', async () => {
    const protectedPaths = [
      '/docs/../v1/sources',
      '/docs/..%2f..%2fv1/sources',
      '/docs/%2e%2e/v1/sources',
      '/docs/%252e%252e/v1/sources',
      '//docs/..//v1/sources',
      '/docsx',
      '/Docs',
      '/v1/sources',
      '/registry/default/v0.1/servers/../../../v1/sources',
      '/registry/default/v0.1/servers%2F..%2F..%2F..%2Fv1%2Fsources',
    ];
    for (const p of protectedPaths) {
      const r = await rawRequest(oauth.url, 'GET', p);
      assertJsonError(r, 401, p);
      assert.match(String(r.headers['www-authenticate']), /^Bearer realm="mcp-registry", error="invalid_request", error_description="missing or malformed authorization header", resource_metadata="https:\/\/registry.test\/.well-known\/oauth-protected-resource"$/);
    }
    // Node's own parser already refuses a backslash path; it must not be public either way.
    const bs = await rawRequest(oauth.url, 'GET', '/docs\\..\\v1/sources');
    assert.ok(bs.status === 400 || bs.status === 401, `backslash path: ${bs.status}`);
    // Public: the listed prefix (whole segments), /openapi.json and /.well-known, with no token.
    assert.equal((await rawRequest(oauth.url, 'GET', '/registry/default/v0.1/servers?limit=2')).status, 200);
    assert.equal((await rawRequest(oauth.url, 'GET', '/openapi.json')).status, 200);
    assert.equal((await rawRequest(oauth.url, 'GET', '/docs/anything')).status, 404);
    const meta = JSON.parse((await rawRequest(oauth.url, 'GET', '/.well-known/oauth-protected-resource')).body);
    assert.deepEqual(meta, { resource: 'https://registry.test', authorization_servers: ['https://127.0.0.1:9'], bearer_methods_supported: ['header'] });
    // A garbage token is a 401 invalid_token, not a crash.
    for (const h of ['Bearer x', `Bearer ${'a'.repeat(20000)}`, 'Bearer a.b.c', 'Basic Zm9vOmJhcg==', 'bearer x']) {
      const r = await rawRequest(oauth.url, 'GET', '/v1/sources', undefined, { authorization: h });
      assert.ok(r.status === 401 || r.status === 431, `${h.slice(0, 20)} → ${r.status}`);
    }
  });

  it('openapi.json is an OpenAPI 3.1 document of every route, and every documented route exists', async () => {
    const doc = (await getJson(`${anon.url}/openapi.json`)).body;
    assert.equal(doc.openapi, '3.1.0');
    // Every route the servers answer (admin.ts, v01.ts, app.ts), by method.
    const routes = [
      'get /registry/{registryName}/v0.1/servers',
      'get /registry/{registryName}/v0.1/servers/{serverName}/versions',
      'get /registry/{registryName}/v0.1/servers/{serverName}/versions/{version}',
      'get /v1/me',
      'get /v1/sources',
      'get /v1/sources/{name}',
      'put /v1/sources/{name}',
      'delete /v1/sources/{name}',
      'get /v1/sources/{name}/entries',
      'get /v1/registries',
      'get /v1/registries/{name}',
      'put /v1/registries/{name}',
      'delete /v1/registries/{name}',
      'get /v1/registries/{name}/entries',
      'post /v1/entries',
      'delete /v1/entries/{type}/{name}/versions/{version}',
      'get /v1/entries/{type}/{name}/claims',
      'put /v1/entries/{type}/{name}/claims',
      'get /openapi.json',
      'get /.well-known/oauth-protected-resource',
    ];
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    assert.deepEqual([...documented].sort(), [...routes].sort());
    // Every $ref resolves, every operation has responses.
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const r of refs) {
      const target = r.slice(8, -1).replace(/^#\//, '').split('/').reduce((o: any, k) => o?.[k], doc);
      assert.ok(target, `unresolved ${r}`);
    }
    // Each documented route is routed: a request reaches its handler (never the catch-all 404 / 405).
    const fill = (path: string) =>
      path
        .replace('{registryName}', 'default')
        .replace('{serverName}', 'io.test%2Fserver-00001')
        .replace('{version}', '1.0.0')
        .replace('{type}', 'server')
        .replace('{name}', path.startsWith('/v1/entries') ? 'io.none%2Fx' : path.startsWith('/v1/registries') ? 'default' : 'f');
    for (const route of routes) {
      const [method, path] = route.split(' ') as [string, string];
      const server = path.startsWith('/.well-known') ? oauth : anon;
      const r = await rawRequest(server.url, method.toUpperCase(), fill(path), method === 'get' || method === 'delete' ? undefined : '{}', { 'content-type': 'application/json' });
      assert.ok(r.status !== 405 && r.status !== 500, `${route}: ${r.status}`);
      assert.ok(!(r.status === 404 && JSON.parse(r.body).error === 'not found'), `${route} is not routed: ${r.body}`);
    }
  });

  it('invalid configurations stop start-up with a clear message and exit 2', async () => {
    // Every message is checked in config.test.ts; here two go through the real CLI.
    const f = join(dir, 'bad.yaml');
    writeFileSync(f, 'sources: [{name: a, file: {path: /x}}]\nregistries: [{name: r, sources: [a]}]\n');
    const cli = spawnCli(['serve', '--config', f, '--address', '127.0.0.1:0', '--internal-address', '127.0.0.1:0']);
    assert.equal(await cli.exited, 2, cli.stderr());
    assert.match(cli.stderr(), /^Error: invalid configuration: source\[0\] \(a\): syncPolicy.interval is required$/m);
    assert.doesNotMatch(cli.stderr(), /at .*\.ts:\d+/, 'no stack trace');
    const missing = spawnCli(['serve', '--config', join(dir, 'nope.yaml')]);
    assert.equal(await missing.exited, 2);
    assert.match(missing.stderr(), /cannot read/);
    // THV_REGISTRY_* overrides reach the CLI's configuration (and are validated like the file).
    const good = join(dir, 'good.yaml');
    writeFileSync(good, 'sources: [{name: m, managed: {}}]\nregistries: [{name: r, sources: [m]}]\nauth: {mode: anonymous}\n');
    const envMode = spawnCli(['serve', '--config', good, '--address', '127.0.0.1:0', '--internal-address', '127.0.0.1:0'], { THV_REGISTRY_AUTH_MODE: 'sometimes' });
    assert.equal(await envMode.exited, 2, envMode.stderr());
    assert.match(envMode.stderr(), /^Error: invalid configuration: invalid auth configuration: invalid auth.mode: sometimes \(must be 'anonymous' or 'oauth'\)$/m);
    // A bad address is reported before any database is opened (this one is unreachable).
    const unreachable = join(dir, 'unreachable.yaml');
    writeFileSync(unreachable, 'sources: [{name: m, managed: {}}]\nregistries: [{name: r, sources: [m]}]\nauth: {mode: anonymous}\ndatabase: {host: 127.0.0.1, port: 1, user: u, database: d, sslMode: disable}\n');
    const badAddr = spawnCli(['serve', '--config', unreachable, '--address', 'nonsense', '--internal-address', '127.0.0.1:0']);
    assert.equal(await badAddr.exited, 2, badAddr.stderr());
    assert.match(badAddr.stderr(), /^Error: address must be host:port or :port: nonsense$/m);
    const noDb = spawnCli(['serve', '--config', unreachable, '--address', '127.0.0.1:0', '--internal-address', '127.0.0.1:0']);
    assert.notEqual(await noDb.exited, 0);
    assert.match(noDb.stderr(), /^Error: cannot connect to PostgreSQL at 127\.0\.0\.1:1 as u: .*ECONNREFUSED/m);
    assert.doesNotMatch(noDb.stderr(), /at .*\.ts:\d+/, 'no stack trace');
  });
});
