import { VERSION } from '../../version.js';

/**
 * The OpenAPI 3.1 document of every route on the public server, built from one table so it cannot
 * drift far from the router. Served at /openapi.json (always public).
 */
const err = { $ref: '#/components/responses/Error' };
const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const p = (name: string, where: 'path' | 'query', description: string, schema: object = { type: 'string' }) => ({
  name,
  in: where,
  required: where === 'path',
  description,
  schema,
});

const registryParam = p('registryName', 'path', 'Registry name');
const serverName = p('serverName', 'path', 'URL-encoded server name, e.g. io.example%2Fserver');

function op(summary: string, tags: string[], opts: { params?: object[]; body?: object; ok: [string, object | null]; errors?: string[]; security?: boolean }) {
  const responses: Record<string, object> = {
    [opts.ok[0]]: opts.ok[1] ? { description: 'OK', ...json(opts.ok[1]) } : { description: 'No content' },
  };
  for (const code of opts.errors ?? ['400', '401', '403', '404']) responses[code] = err;
  return {
    summary,
    tags,
    ...(opts.params ? { parameters: opts.params } : {}),
    ...(opts.body ? { requestBody: { required: true, ...json(opts.body) } } : {}),
    responses,
    ...(opts.security === false ? { security: [] } : {}),
  };
}

export function openApiDocument(): object {
  const type = p('type', 'path', 'server | skill | plugin', { type: 'string', enum: ['server', 'skill', 'plugin'] });
  const entryName = p('name', 'path', 'URL-encoded entry name');
  const named = p('name', 'path', 'Name');
  return {
    openapi: '3.1.0',
    info: {
      title: 'ToolHive Registry API',
      version: '0.1',
      description: `MCP Registry API v0.1 and admin API, served by thv-registry-api ${VERSION}. See https://github.com/modelcontextprotocol/registry`,
    },
    security: [{ BearerAuth: [] }],
    paths: {
      '/registry/{registryName}/v0.1/servers': {
        get: op('List servers (every version unless version=latest)', ['registry'], {
          params: [
            registryParam,
            p('cursor', 'query', 'Opaque cursor from metadata.nextCursor'),
            p('limit', 'query', 'Page size, 1-1000 (default 30; larger values are clamped)', { type: 'integer', minimum: 1 }),
            p('search', 'query', 'Case-insensitive substring of name, title or description'),
            p('updated_since', 'query', 'RFC 3339 timestamp', { type: 'string', format: 'date-time' }),
            p('version', 'query', "Exact version, or 'latest'"),
          ],
          ok: ['200', ref('ServerList')],
        }),
      },
      '/registry/{registryName}/v0.1/servers/{serverName}/versions': {
        get: op('List the versions of a server', ['registry'], { params: [registryParam, serverName], ok: ['200', ref('ServerList')] }),
      },
      '/registry/{registryName}/v0.1/servers/{serverName}/versions/{version}': {
        get: op('Get one version of a server', ['registry'], {
          params: [registryParam, serverName, p('version', 'path', "URL-encoded version, or 'latest'")],
          ok: ['200', ref('ServerResponse')],
        }),
      },
      '/v1/me': { get: op('Who am I', ['admin'], { ok: ['200', ref('Me')], errors: ['401'] }) },
      '/v1/sources': { get: op('List sources', ['admin'], { ok: ['200', { type: 'object', properties: { sources: { type: 'array', items: ref('SourceInfo') } } }], errors: ['401', '403'] }) },
      '/v1/sources/{name}': {
        get: op('Get a source', ['admin'], { params: [named], ok: ['200', ref('SourceInfo')] }),
        put: op('Create (201) or update (200) an API source', ['admin'], { params: [named], body: ref('SourceRequest'), ok: ['200', ref('SourceInfo')], errors: ['400', '401', '403', '409'] }),
        delete: op('Delete an API source', ['admin'], { params: [named], ok: ['204', null], errors: ['401', '403', '404', '409'] }),
      },
      '/v1/sources/{name}/entries': { get: op('Entries of a source', ['admin'], { params: [named], ok: ['200', { type: 'object' }] }) },
      '/v1/registries': { get: op('List registries', ['admin'], { ok: ['200', { type: 'object', properties: { registries: { type: 'array', items: ref('RegistryInfo') } } }], errors: ['401'] }) },
      '/v1/registries/{name}': {
        get: op('Get a registry', ['admin'], { params: [named], ok: ['200', ref('RegistryInfo')] }),
        put: op('Create (201) or update (200) an API registry', ['admin'], {
          params: [named],
          body: { type: 'object', required: ['sources'], properties: { sources: { type: 'array', items: { type: 'string' } }, claims: ref('Claims') } },
          ok: ['200', ref('RegistryInfo')],
        }),
        delete: op('Delete an API registry', ['admin'], { params: [named], ok: ['204', null] }),
      },
      '/v1/registries/{name}/entries': { get: op('Entries of a registry, unshadowed', ['admin'], { params: [named], ok: ['200', { type: 'object' }] }) },
      '/v1/entries': {
        post: op('Publish a server version into the managed source', ['admin'], {
          body: { type: 'object', properties: { claims: ref('Claims'), server: ref('ServerJSON') } },
          ok: ['201', ref('ServerJSON')],
          errors: ['400', '401', '403', '409', '413'],
        }),
      },
      '/v1/entries/{type}/{name}/versions/{version}': {
        delete: op('Delete a published version', ['admin'], { params: [type, entryName, p('version', 'path', 'Version')], ok: ['204', null] }),
      },
      '/v1/entries/{type}/{name}/claims': {
        get: op('Claims of a published entry', ['admin'], { params: [type, entryName], ok: ['200', { type: 'object', properties: { claims: ref('Claims') } }] }),
        put: op('Replace the claims of a published entry', ['admin'], { params: [type, entryName], body: { type: 'object', properties: { claims: ref('Claims') } }, ok: ['204', null] }),
      },
      '/openapi.json': { get: { summary: 'This document', tags: ['meta'], security: [], responses: { '200': { description: 'OpenAPI 3.1 document', ...json({ type: 'object' }) } } } },
      '/.well-known/oauth-protected-resource': {
        get: { summary: 'RFC 9728 protected resource metadata (oauth mode)', tags: ['meta'], security: [], responses: { '200': { description: 'metadata', ...json({ type: 'object' }) } } },
      },
    },
    components: {
      securitySchemes: { BearerAuth: { type: 'http', scheme: 'bearer' } },
      responses: { Error: { description: 'Error', ...json(ref('Error')) } },
      schemas: {
        Error: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } },
        Claims: { type: 'object', additionalProperties: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] } },
        ServerJSON: { type: 'object', required: ['name', 'version', 'description'], properties: { name: { type: 'string' }, version: { type: 'string' }, description: { type: 'string' } }, additionalProperties: true },
        ServerResponse: {
          type: 'object',
          properties: {
            server: ref('ServerJSON'),
            _meta: {
              type: 'object',
              properties: {
                'io.modelcontextprotocol.registry/official': {
                  type: 'object',
                  properties: { status: { type: 'string' }, publishedAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' }, isLatest: { type: 'boolean' } },
                },
              },
            },
          },
        },
        ServerList: {
          type: 'object',
          properties: {
            servers: { type: 'array', items: ref('ServerResponse') },
            metadata: { type: 'object', properties: { nextCursor: { type: 'string' }, count: { type: 'integer' } } },
          },
        },
        Me: { type: 'object', properties: { subject: { type: 'string' }, roles: { type: 'array', items: { type: 'string' } } } },
        SourceRequest: { type: 'object', description: 'One of git, api, file, managed; syncPolicy.interval; filter; claims', additionalProperties: true },
        SourceInfo: { type: 'object', additionalProperties: true },
        RegistryInfo: {
          type: 'object',
          properties: { name: { type: 'string' }, claims: ref('Claims'), creationType: { type: 'string' }, sources: { type: 'array', items: { type: 'string' } }, createdAt: { type: 'string' }, updatedAt: { type: 'string' } },
        },
      },
    },
  };
}
