import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startThv, type RunningThv } from '../helpers/thv.js';
import { makeHome, type TestHome } from '../secrets/cli-helper.js';
import { startRegistryApi, testRegistry } from './fixtures.js';

const API_KEY = 'key-5b1d8e2f-SHOULD-NEVER-BE-LOGGED';
const OTHER = 'other-9c4a7d30-SHOULD-NEVER-BE-LOGGED';
const PASSWORD = 'registry run test password';

/** Calls server-everything's get-env tool through the proxy with the MCP SDK client. */
async function serverEnv(url: string): Promise<Record<string, string>> {
  const client = new Client({ name: 'thv-registry-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const result = (await client.callTool({ name: 'get-env', arguments: {} })) as { content: Array<{ type: string; text: string }> };
    return JSON.parse(result.content[0]!.text) as Record<string, string>;
  } finally {
    await client.close();
  }
}

describe('thv run <registry name> (process runtime, registry file)', () => {
  let home: TestHome;
  let running: RunningThv | undefined;
  const env = (): NodeJS.ProcessEnv => ({ ...home.env, TOOLHIVE_SECRETS_PASSWORD: PASSWORD });
  before(async () => {
    home = makeHome('thv-regrun-');
    const file = join(home.dir, 'registry.json');
    writeFileSync(file, JSON.stringify(testRegistry()));
    for (const args of [['config', 'set-registry', file], ['secret', 'provider', 'encrypted']]) {
      const r = await home.thv(args);
      assert.equal(r.code, 0, r.stderr);
    }
  });
  after(async () => {
    await running?.stop();
    home.cleanup();
  });

  it('a missing required secret variable fails before anything starts, naming it and how to pass it', async () => {
    const r = await home.thv(['run', '--runtime', 'process', '--foreground', 'everything-keyed'], { env: env() });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /missing required environment variable: TEST_API_KEY \(API key for the test\) for dev\.thv\.test\/everything-keyed/);
    assert.match(r.stderr, /thv secret set TEST_API_KEY/);
    assert.equal(r.stdout, '');
  });

  it('a missing required plain variable names -e', async () => {
    const r = await home.thv(['run', '--runtime', 'process', '--foreground', 'needs-plain'], { env: env() });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /missing required environment variable: REQUIRED_PLAIN/);
    assert.match(r.stderr, /-e REQUIRED_PLAIN=<value>/);
  });

  it('a --secret that does not exist fails clearly', async () => {
    const r = await home.thv(['run', '--runtime', 'process', '--foreground', '--secret', 'nope,target=X', '-e', 'TEST_API_KEY=x', 'everything-keyed'], { env: env() });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /secret not found in the encrypted secrets provider: nope/);
  });

  it('runs with the secret from the store, --secret values and registry defaults; an MCP client sees them', async () => {
    assert.equal((await home.thv(['secret', 'set', 'TEST_API_KEY'], { input: API_KEY, env: env() })).code, 0);
    assert.equal((await home.thv(['secret', 'set', 'other'], { input: OTHER, env: env() })).code, 0);
    // --debug: the values must not show up even in debug logs.
    running = await startThv(['run', '--debug', '--runtime', 'process', '--foreground', '--secret', 'other,target=OTHER_SECRET', 'everything-keyed'], { env: env() });
    assert.match(running.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const seen = await serverEnv(running.url);
    assert.equal(seen['TEST_API_KEY'], API_KEY);
    assert.equal(seen['OTHER_SECRET'], OTHER);
    assert.equal(seen['TEST_REGION'], 'eu-test-1');
    assert.equal(seen['TEST_OPTIONAL'], undefined);
    assert.equal(seen['MCP_TRANSPORT'], 'stdio');
    assert.equal(seen['TOOLHIVE_SECRETS_PASSWORD'], undefined, 'the store password must not reach the server');
    const stderr = running.stderr();
    assert.equal(await running.stop(), 0);
    running = undefined;
    // The values are nowhere: not in thv's output, not in any file but the encrypted store.
    for (const value of [API_KEY, OTHER]) {
      assert.doesNotMatch(stderr, new RegExp(value));
      for (const f of home.files()) assert.equal(f.content.includes(Buffer.from(value)), false, `${value} found in ${f.path}`);
    }
  });

  it('-e satisfies a required variable; the name comes from the registry name', async () => {
    running = await startThv(['run', '--runtime', 'process', '--foreground', '-e', 'REQUIRED_PLAIN=given', 'needs-plain'], { env: env() });
    assert.match(await (async () => (await serverEnv(running!.url))['REQUIRED_PLAIN'] ?? '')(), /^given$/);
    assert.equal(await running.stop(), 0);
    running = undefined;
  });

  it('an image-only entry and an unknown name fail clearly on the process runtime', async () => {
    const image = await home.thv(['run', '--runtime', 'process', '--foreground', 'image-only'], { env: env() });
    assert.equal(image.code, 2);
    assert.match(image.stderr, /published only as a container image \(ghcr\.io\/example\/image-only:1\.0\)/);
    const unknown = await home.thv(['run', '--runtime', 'process', '--foreground', 'non-existent-server-12345'], { env: env() });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no MCP server named "non-existent-server-12345" in the registry at /);
  });
});

describe('thv run <registry name> from a registry API', () => {
  let home: TestHome;
  let api: Awaited<ReturnType<typeof startRegistryApi>>;
  let running: RunningThv | undefined;
  before(async () => {
    home = makeHome('thv-regapi-');
    api = await startRegistryApi((testRegistry()['data'] as { servers: unknown[] }).servers);
    const r = await home.thv(['config', 'set-registry', api.base, '--allow-private-ip']);
    assert.equal(r.code, 0, r.stderr);
  });
  after(async () => {
    await running?.stop();
    await api.close();
    home.cleanup();
  });

  it('resolves the entry through /registry/{name}/v0.1 and runs it; the environment provider supplies the secret', async () => {
    running = await startThv(['run', '--runtime', 'process', '--foreground', 'dev.thv.test/everything-keyed'], {
      env: { ...home.env, TOOLHIVE_SECRETS_PROVIDER: 'environment', TOOLHIVE_SECRET_TEST_API_KEY: API_KEY },
    });
    assert.ok(api.requests.some((r) => r === 'GET /registry/default/v0.1/servers/dev.thv.test%2Feverything-keyed/versions/latest'), api.requests.join('\n'));
    const seen = await serverEnv(running.url);
    assert.equal(seen['TEST_API_KEY'], API_KEY);
    assert.doesNotMatch(running.stderr(), new RegExp(API_KEY));
    assert.equal(await running.stop(), 0);
    running = undefined;
  });
});
