import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeHome, type TestHome } from '../secrets/cli-helper.js';
import { startRegistryApi, testRegistry } from './fixtures.js';

describe('thv registry / search with the built-in catalog', () => {
  let home: TestHome;
  before(() => {
    home = makeHome('thv-reg-');
  });
  after(() => home.cleanup());

  it('registry list prints a table; --output json prints ToolHive-shaped entries', async () => {
    const text = await home.thv(['registry', 'list']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^NAME +TYPE +TRANSPORT/);
    assert.match(text.stdout, /io\.github\.modelcontextprotocol\/everything +server +stdio/);
    const json = await home.thv(['registry', 'list', '--output', 'json']);
    const entries = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    const remote = entries.find((e) => e['name'] === 'com.notion/notion-remote')!;
    assert.equal(remote['url'], 'https://mcp.notion.com/mcp');
    const gh = entries.find((e) => e['name'] === 'io.github.modelcontextprotocol/github')!;
    assert.deepEqual(gh['env_vars'], [{ name: 'GITHUB_PERSONAL_ACCESS_TOKEN', description: 'GitHub personal access token', required: true, secret: true }]);
    const bad = await home.thv(['registry', 'list', '--format', 'yaml']);
    assert.equal(bad.code, 2);
  });

  it('registry info by short name; unknown names fail', async () => {
    const info = await home.thv(['registry', 'info', 'everything']);
    assert.equal(info.code, 0, info.stderr);
    assert.match(info.stdout, /npm package: +@modelcontextprotocol\/server-everything/);
    const json = JSON.parse((await home.thv(['registry', 'info', 'fetch', '--format', 'json'])).stdout) as Record<string, unknown>;
    assert.equal(json['target_port'], 8080);
    const missing = await home.thv(['registry', 'info', 'nope-nope']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /server nope-nope not found in the registry/);
  });

  it('search matches names, descriptions, tags and tools', async () => {
    const r = await home.thv(['search', 'vulnerab']);
    assert.match(r.stdout, /Found 1 servers matching query: vulnerab/);
    assert.match(r.stdout, /io\.github\.stacklok\/osv/);
    const tool = JSON.parse((await home.thv(['search', 'sequentialthinking', '-o', 'json'])).stdout) as unknown[];
    assert.equal(tool.length, 1);
    const none = await home.thv(['search', 'zzzz-nothing']);
    assert.equal(none.stdout, 'No servers found matching query: zzzz-nothing\n');
  });
});

describe('thv config set-registry / get-registry / unset-registry', () => {
  let home: TestHome;
  let api: Awaited<ReturnType<typeof startRegistryApi>>;
  let plain: Server;
  let plainBase: string;
  before(async () => {
    home = makeHome('thv-regcfg-');
    writeFileSync(join(home.dir, 'registry.json'), JSON.stringify(testRegistry()));
    api = await startRegistryApi((testRegistry()['data'] as { servers: unknown[] }).servers);
    // A static registry file served over HTTP (a URL that does not speak the API).
    plain = createServer((req, res) => {
      if (req.url === '/catalog/registry.json' || req.url === '/catalog') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(testRegistry()));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    plainBase = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
  });
  after(async () => {
    await api.close();
    await new Promise((r) => plain.close(r));
    home.cleanup();
  });

  const configYaml = (): string => readFileSync(join(home.dir, 'config/toolhive/config.yaml'), 'utf8');

  it('a local file', async () => {
    const set = await home.thv(['config', 'set-registry', join(home.dir, 'registry.json')]);
    assert.equal(set.code, 0, set.stderr);
    assert.match(configYaml(), /local_registry_path: .*registry\.json/);
    assert.match((await home.thv(['config', 'get-registry'])).stdout, /registry\.json \(local registry file\)/);
    const list = await home.thv(['registry', 'list']);
    assert.match(list.stdout, /dev\.thv\.test\/everything-keyed/);
    assert.doesNotMatch(list.stdout, /notion/);
    const missing = await home.thv(['config', 'set-registry', join(home.dir, 'nope.json')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /local registry file not found/);
  });

  it('a registry API URL (thv-registry-api shape), probed and followed across pages', async () => {
    const refused = await home.thv(['config', 'set-registry', api.base]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /private or loopback address/);
    assert.match(refused.stderr, /--allow-private-ip/);

    const set = await home.thv(['config', 'set-registry', api.base, '--allow-private-ip']);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /Successfully set registry API/);
    const yaml = configYaml();
    assert.match(yaml, /registry_api_url: http:\/\/127\.0\.0\.1:\d+\/registry\/default/);
    assert.match(yaml, /allow_private_registry_ip: true/);
    assert.doesNotMatch(yaml, /local_registry_path/);

    api.requests.length = 0;
    const list = JSON.parse((await home.thv(['registry', 'list', '-o', 'json'])).stdout) as Array<{ name: string }>;
    assert.equal(list.length, 6);
    assert.ok(api.requests.filter((r) => r.startsWith('GET /registry/default/v0.1/servers?')).length >= 3, 'pagination followed');
    assert.ok(api.requests.every((r) => r.includes('version=latest')));

    const info = await home.thv(['registry', 'info', 'remote', '-o', 'json']);
    assert.equal((JSON.parse(info.stdout) as { url: string }).url, 'https://mcp.example.com/mcp');
    const search = await home.thv(['search', 'api key']);
    assert.match(search.stdout, /everything-keyed/);
  });

  it('a static JSON URL', async () => {
    const set = await home.thv(['config', 'set-registry', `${plainBase}/catalog/registry.json`, '-p']);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /remote registry file/);
    assert.match(configYaml(), /registry_url: /);
    // A URL without .json that does not answer the API probe is taken as a file, too.
    const probed = await home.thv(['config', 'set-registry', `${plainBase}/catalog`, '-p']);
    assert.match(probed.stdout, /remote registry file/);
    assert.match((await home.thv(['registry', 'list'])).stdout, /dev\.thv\.test\/remote/);
  });

  it('unset-registry goes back to the built-in catalog and keeps other settings', async () => {
    await home.thv(['secret', 'provider', 'environment']);
    const r = await home.thv(['config', 'unset-registry']);
    assert.equal(r.code, 0, r.stderr);
    const yaml = configYaml();
    assert.doesNotMatch(yaml, /registry/);
    assert.match(yaml, /provider_type: environment/);
    assert.equal((await home.thv(['config', 'get-registry'])).stdout, 'Using the built-in registry\n');
  });
});
