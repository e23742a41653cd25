import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVERYTHING_SERVER } from '../helpers/thv.js';

/** A registry document (upstream format) with entries the tests run or look up. */
export function testRegistry(): Record<string, unknown> {
  const ext = (key: string, v: Record<string, unknown>): Record<string, unknown> => ({
    'io.modelcontextprotocol.registry/publisher-provided': { 'io.github.stacklok': { [key]: v } },
  });
  return {
    $schema: 'https://raw.githubusercontent.com/stacklok/toolhive-core/main/registry/types/data/upstream-registry.schema.json',
    version: '1.0.0',
    meta: { last_updated: '2026-11-01T00:00:00Z' },
    data: {
      servers: [
        {
          name: 'dev.thv.test/everything-keyed',
          description: 'server-everything that needs an API key (test entry)',
          version: '1.0.0',
          packages: [
            {
              registryType: 'npm',
              identifier: '@modelcontextprotocol/server-everything',
              transport: { type: 'stdio' },
              environmentVariables: [
                { name: 'TEST_API_KEY', description: 'API key for the test', isRequired: true, isSecret: true },
                { name: 'TEST_REGION', description: 'Region', isRequired: false, default: 'eu-test-1' },
                { name: 'TEST_OPTIONAL', description: 'Optional, no default', isRequired: false },
              ],
            },
          ],
          _meta: ext('@modelcontextprotocol/server-everything', { status: 'Active', tier: 'Community', tools: ['echo', 'get-env'], tags: ['test'] }),
        },
        {
          name: 'dev.thv.test/needs-plain',
          description: 'needs a plain required variable',
          version: '1.0.0',
          packages: [
            {
              registryType: 'npm',
              identifier: '@modelcontextprotocol/server-everything',
              transport: { type: 'stdio' },
              environmentVariables: [{ name: 'REQUIRED_PLAIN', description: 'Some setting', isRequired: true }],
            },
          ],
        },
        {
          name: 'dev.thv.test/image-only',
          description: 'only an OCI image',
          version: '1.0.0',
          packages: [{ registryType: 'oci', identifier: 'ghcr.io/example/image-only:1.0', transport: { type: 'streamable-http', url: 'http://localhost:9090/mcp' } }],
        },
        {
          name: 'dev.thv.test/remote',
          description: 'a remote server',
          version: '1.0.0',
          remotes: [{ type: 'streamable-http', url: 'https://mcp.example.com/mcp' }],
        },
        { name: 'io.example/dup', description: 'first dup', version: '1', remotes: [{ type: 'sse', url: 'https://a.example.com/sse' }] },
        { name: 'org.example/dup', description: 'second dup', version: '1', remotes: [{ type: 'sse', url: 'https://b.example.com/sse' }] },
      ],
    },
  };
}

export { EVERYTHING_SERVER };

/**
 * A small MCP Registry API v0.1 server with thv-registry-api's routes (`/registry/{name}/v0.1/servers`,
 * `…/servers/{name}/versions/latest`), cursor pagination and search — for the client side, until
 * thv-registry-api can serve it for real.
 */
export async function startRegistryApi(servers: unknown[], pageSize = 2): Promise<{ base: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(`${req.method} ${url.pathname}${url.search}`);
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const prefix = '/registry/default/v0.1/servers';
    if (url.pathname === prefix) {
      const q = (url.searchParams.get('search') ?? '').toLowerCase();
      const matching = servers.filter((s) => {
        const o = s as { name: string; description?: string };
        return q === '' || o.name.toLowerCase().includes(q) || (o.description ?? '').toLowerCase().includes(q);
      });
      const limit = Math.min(Number(url.searchParams.get('limit') ?? 30), pageSize);
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const page = matching.slice(start, start + limit);
      const next = start + limit < matching.length ? String(start + limit) : undefined;
      return send(200, { servers: page.map((s) => ({ server: s, _meta: {} })), metadata: { count: page.length, ...(next ? { nextCursor: next } : {}) } });
    }
    const m = /^\/registry\/default\/v0\.1\/servers\/(.+)\/versions\/latest$/.exec(url.pathname);
    if (m) {
      const name = decodeURIComponent(m[1]!);
      const found = servers.find((s) => (s as { name: string }).name === name);
      return found ? send(200, { server: found, _meta: {} }) : send(404, { error: 'not found' });
    }
    send(404, { error: 'not found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}/registry/default`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
