import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRegistryDocument } from '../../src/registry/parse.js';
import { BUILTIN_CATALOG } from '../../src/registry/builtin-catalog.js';
import { findEntry, searchEntries } from '../../src/registry/lookup.js';
import { planRegistryRun } from '../../src/registry/run-entry.js';
import { builtinProvider } from '../../src/registry/providers.js';
import { testRegistry } from './fixtures.js';

describe('registry documents', () => {
  it('the built-in catalog parses, with an npx stdio entry, a required secret and a remote', () => {
    const entries = parseRegistryDocument(BUILTIN_CATALOG, 'builtin');
    assert.ok(entries.length >= 8);
    const everything = findEntry(entries, 'everything')!;
    assert.equal(everything.transport, 'stdio');
    assert.equal(everything.npmPackage, '@modelcontextprotocol/server-everything');
    assert.equal(everything.image, 'docker.io/mcp/everything:latest');
    assert.ok(everything.envVars.some((v) => v.name === 'DEBUG' && !v.required));
    const gh = findEntry(entries, 'io.github.modelcontextprotocol/github')!;
    assert.deepEqual(gh.envVars[0], { name: 'GITHUB_PERSONAL_ACCESS_TOKEN', description: 'GitHub personal access token', required: true, secret: true, default: undefined });
    const fetch = findEntry(entries, 'fetch')!;
    assert.equal(fetch.transport, 'streamable-http');
    assert.equal(fetch.targetPort, 8080);
    assert.deepEqual(fetch.permissions, { network: { outbound: { insecure_allow_all: true } } });
    assert.ok(entries.some((e) => e.kind === 'remote' && e.url === 'https://mcp.notion.com/mcp'));
  });

  it('refuses the legacy ToolHive format with a migration hint', () => {
    assert.throws(() => parseRegistryDocument({ version: '1', last_updated: 'x', servers: { fetch: { image: 'x' } } }, 'old.json'), /legacy ToolHive registry format/);
    assert.throws(() => parseRegistryDocument({ hello: 1 }, 'x.json'), /expected the upstream registry format/);
    assert.throws(() => parseRegistryDocument({ data: { servers: [{ description: 'no name' }] } }, 'x.json'), /missing name/);
  });

  it('looks up full names, unique short names, and reports ambiguity', () => {
    const entries = parseRegistryDocument(testRegistry(), 'test');
    assert.equal(findEntry(entries, 'dev.thv.test/remote')?.kind, 'remote');
    assert.equal(findEntry(entries, 'remote')?.url, 'https://mcp.example.com/mcp');
    assert.equal(findEntry(entries, 'nope'), undefined);
    assert.equal(findEntry(entries, 'other/remote'), undefined);
    assert.throws(() => findEntry(entries, 'dup'), /multiple servers match 'dup': io.example\/dup, org.example\/dup — use the full name/);
    assert.equal(findEntry(entries, 'image-only')?.targetPort, 9090);
    assert.deepEqual(searchEntries(entries, 'API KEY').map((e) => e.name), ['dev.thv.test/everything-keyed']);
  });

  it('maps entries onto what the process runtime runs', async () => {
    const p = builtinProvider();
    const ev = await planRegistryRun(p, 'everything', 'process');
    assert.equal(ev?.image, 'npx://@modelcontextprotocol/server-everything');
    assert.equal(ev?.info.name, 'io.github.modelcontextprotocol/everything');
    assert.equal((await planRegistryRun(p, 'time', 'process'))?.image, 'uvx://mcp-server-time');
    assert.equal((await planRegistryRun(p, 'everything', 'docker'))?.image, 'docker.io/mcp/everything:latest');
    await assert.rejects(planRegistryRun(p, 'fetch', 'process'), /only as a container image/);
    await assert.rejects(planRegistryRun(p, 'no-such-server-12345', 'process'), /no MCP server named "no-such-server-12345" in the built-in catalog/);
    assert.equal(await planRegistryRun(p, 'ghcr.io/org/img:1', 'docker'), undefined);
    assert.equal((await planRegistryRun(p, 'notion-remote', 'process'))?.info.remoteUrl, 'https://mcp.notion.com/mcp');
  });
});
