import { PUBLISHER_PROVIDED, STACKLOK_NAMESPACE, UPSTREAM_SCHEMA_URL } from './types.js';

/**
 * The built-in catalog: a small, real set of MCP servers in ToolHive's upstream registry format, used when
 * no registry is configured (`thv config set-registry` replaces it). Entries carry an OCI image for
 * container runtimes and, where the server is published there, its npm or PyPI package, which the process
 * runtime runs through npx / uvx.
 */

const SERVER_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

function ext(key: string, value: Record<string, unknown>): Record<string, unknown> {
  return { [PUBLISHER_PROVIDED]: { [STACKLOK_NAMESPACE]: { [key]: value } } };
}

const NO_NETWORK = { network: { outbound: {} } };
const ANY_NETWORK = { network: { outbound: { insecure_allow_all: true } } };

export const BUILTIN_CATALOG = {
  $schema: UPSTREAM_SCHEMA_URL,
  version: '1.0.0',
  meta: { last_updated: '2026-11-01T00:00:00Z' },
  data: {
    servers: [
      {
        $schema: SERVER_SCHEMA,
        name: 'io.github.modelcontextprotocol/everything',
        title: 'Everything',
        description: 'MCP reference server that exercises every feature of the protocol: tools, resources, prompts, sampling, logging',
        version: '2026.8.31',
        repository: { url: 'https://github.com/modelcontextprotocol/servers', source: 'github' },
        packages: [
          { registryType: 'oci', identifier: 'docker.io/mcp/everything:latest', transport: { type: 'stdio' } },
          {
            registryType: 'npm',
            identifier: '@modelcontextprotocol/server-everything',
            transport: { type: 'stdio' },
            environmentVariables: [
              {
                name: 'DEBUG',
                description: 'Debug namespaces to log (optional)',
                isRequired: false,
                isSecret: false,
              },
            ],
          },
        ],
        _meta: ext('docker.io/mcp/everything:latest', {
          status: 'Active',
          tier: 'Community',
          tags: ['test', 'reference', 'demo'],
          tools: [
            'echo',
            'get-annotated-message',
            'get-env',
            'get-resource-links',
            'get-resource-reference',
            'get-structured-content',
            'get-sum',
            'get-tiny-image',
            'gzip-file-as-resource',
            'toggle-simulated-logging',
            'toggle-subscriber-updates',
            'trigger-long-running-operation',
            'simulate-research-query',
          ],
          permissions: NO_NETWORK,
        }),
      },
      {
        $schema: SERVER_SCHEMA,
        name: 'io.github.modelcontextprotocol/sequentialthinking',
        title: 'Sequential Thinking',
        description: 'Dynamic and reflective problem-solving through a structured sequence of thoughts',
        version: '2025.7.1',
        repository: { url: 'https://github.com/modelcontextprotocol/servers', source: 'github' },
        packages: [
          { registryType: 'oci', identifier: 'docker.io/mcp/sequentialthinking:latest', transport: { type: 'stdio' } },
          {
            registryType: 'npm',
            identifier: '@modelcontextprotocol/server-sequential-thinking',
            transport: { type: 'stdio' },
            environmentVariables: [
              {
                name: 'DISABLE_THOUGHT_LOGGING',
                description: 'Set to "true" to stop logging thoughts to stderr',
                isRequired: false,
                isSecret: false,
                default: 'false',
              },
            ],
          },
        ],
        _meta: ext('docker.io/mcp/sequentialthinking:latest', {
          status: 'Active',
          tier: 'Community',
          tags: ['reasoning', 'thinking'],
          tools: ['sequentialthinking'],
          permissions: NO_NETWORK,
        }),
      },
      {
        $schema: SERVER_SCHEMA,
        name: 'io.github.modelcontextprotocol/memory',
        title: 'Memory',
        description: 'Knowledge-graph based persistent memory for an assistant',
        version: '2025.9.25',
        repository: { url: 'https://github.com/modelcontextprotocol/servers', source: 'github' },
        packages: [
          { registryType: 'oci', identifier: 'docker.io/mcp/memory:latest', transport: { type: 'stdio' } },
          {
            registryType: 'npm',
            identifier: '@modelcontextprotocol/server-memory',
            transport: { type: 'stdio' },
            environmentVariables: [
              { name: 'MEMORY_FILE_PATH', description: 'Path of the memory file (default: memory.jsonl next to the server)', isRequired: false, isSecret: false },
            ],
          },
        ],
        _meta: ext('docker.io/mcp/memory:latest', {
          status: 'Active',
          tier: 'Community',
          tags: ['memory', 'knowledge-graph'],
          tools: ['create_entities', 'create_relations', 'add_observations', 'delete_entities', 'delete_observations', 'delete_relations', 'read_graph', 'search_nodes', 'open_nodes'],
          permissions: NO_NETWORK,
        }),
      },
      {
        $schema: SERVER_SCHEMA,
        name: 'io.github.modelcontextprotocol/github',
        title: 'GitHub (reference server)',
        description: 'Repositories, issues and pull requests through the GitHub API (needs a personal access token)',
        version: '2025.4.8',
        repository: { url: 'https://github.com/modelcontextprotocol/servers-archived', source: 'github' },
        packages: [
          {
            registryType: 'npm',
            identifier: '@modelcontextprotocol/server-github',
            transport: { type: 'stdio' },
            environmentVariables: [
              { name: 'GITHUB_PERSONAL_ACCESS_TOKEN', description: 'GitHub personal access token', isRequired: true, isSecret: true },
            ],
          },
        ],
        _meta: ext('@modelcontextprotocol/server-github', {
          status: 'Deprecated',
          tier: 'Community',
          tags: ['github', 'git', 'issues'],
          tools: ['create_or_update_file', 'search_repositories', 'create_repository', 'get_file_contents', 'create_issue', 'list_issues', 'create_pull_request', 'get_pull_request'],
          permissions: { network: { outbound: { allow_host: ['api.github.com', 'github.com'], allow_port: [443] } } },
        }),
      },
      {
        $schema: SERVER_SCHEMA,
        name: 'io.github.github/github-mcp-server',
        title: 'GitHub',
        description: "GitHub's official MCP server: repositories, issues, pull requests, actions and code security",
        version: '0.20.1',
        repository: { url: 'https://github.com/github/github-mcp-server', source: 'github' },
        packages: [
          {
            registryType: 'oci',
            identifier: 'ghcr.io/github/github-mcp-server:v0.20.1',
            transport: { type: 'stdio' },
            environmentVariables: [
              { name: 'GITHUB_PERSONAL_ACCESS_TOKEN', description: 'GitHub personal access token', isRequired: true, isSecret: true },
              { name: 'GITHUB_HOST', description: 'GitHub Enterprise host name (optional)', isRequired: false, isSecret: false },
              { name: 'GITHUB_TOOLSETS', description: 'Comma-separated toolsets to enable', isRequired: false, isSecret: false },
            ],
          },
        ],
        _meta: ext('ghcr.io/github/github-mcp-server:v0.20.1', {
          status: 'Active',
          tier: 'Official',
          tags: ['github', 'git', 'issues', 'pull-requests'],
          tools: ['get_me', 'search_repositories', 'get_file_contents', 'list_issues', 'create_issue', 'list_pull_requests', 'create_pull_request'],
          permissions: { network: { outbound: { allow_host: ['.github.com', '.githubusercontent.com'], allow_port: [443] } } },
        }),
      },
      {
        $schema: SERVER_SCHEMA,
        name: 'io.github.stacklok/fetch',
        title: 'Fetch',
        description: 'Fetches a URL and returns its content as Markdown',
        version: '1.0.2',
        repository: { url: 'https://github.com/StacklokLabs/gofetch', source: 'github' },
        packages: [
          {
            registryType: 'oci',
            identifier: 'ghcr.io/stackloklabs/gofetch/server:1.0.2',
            transport: { type: 'streamable-http', url: 'http://localhost:8080' },
          },
        ],
        _meta: ext('ghcr.io/stackloklabs/gofetch/server:1.0.2', {
          status: 'Active',
          tier: 'Community',
          tags: ['web', 'fetch', 'html', 'markdown'],
          tools: ['fetch'],
          permissions: ANY_NETWORK,
        }),
      },
      {
        $schema: SERVER_SCHEMA,
        name: 'io.github.stacklok/osv',
        title: 'OSV',
        description: 'Looks up vulnerabilities in open source packages in the OSV database',
        version: '0.0.7',
        repository: { url: 'https://github.com/StacklokLabs/osv-mcp', source: 'github' },
        packages: [
          {
            registryType: 'oci',
            identifier: 'ghcr.io/stackloklabs/osv-mcp/server:0.0.7',
            transport: { type: 'streamable-http', url: 'http://localhost:8080' },
          },
        ],
        _meta: ext('ghcr.io/stackloklabs/osv-mcp/server:0.0.7', {
          status: 'Active',
          tier: 'Community',
          tags: ['security', 'vulnerability', 'osv'],
          tools: ['query_vulnerability', 'query_vulnerabilities_batch', 'get_vulnerability'],
          permissions: { network: { outbound: { allow_host: ['api.osv.dev'], allow_port: [443] } } },
        }),
      },
      {
        $schema: SERVER_SCHEMA,
        name: 'io.github.modelcontextprotocol/time',
        title: 'Time',
        description: 'Current time and time-zone conversion',
        version: '2025.9.25',
        repository: { url: 'https://github.com/modelcontextprotocol/servers', source: 'github' },
        packages: [
          { registryType: 'oci', identifier: 'docker.io/mcp/time:latest', transport: { type: 'stdio' } },
          {
            registryType: 'pypi',
            identifier: 'mcp-server-time',
            transport: { type: 'stdio' },
            environmentVariables: [
              { name: 'LOCAL_TIMEZONE', description: 'IANA time zone to report as local (default: the system zone)', isRequired: false, isSecret: false },
            ],
          },
        ],
        _meta: ext('docker.io/mcp/time:latest', {
          status: 'Active',
          tier: 'Community',
          tags: ['time', 'timezone'],
          tools: ['get_current_time', 'convert_time'],
          permissions: NO_NETWORK,
        }),
      },
      {
        $schema: SERVER_SCHEMA,
        name: 'io.github.modelcontextprotocol/brave-search',
        title: 'Brave Search',
        description: 'Web and local search through the Brave Search API (needs an API key)',
        version: '2025.4.8',
        repository: { url: 'https://github.com/modelcontextprotocol/servers-archived', source: 'github' },
        packages: [
          {
            registryType: 'npm',
            identifier: '@modelcontextprotocol/server-brave-search',
            transport: { type: 'stdio' },
            environmentVariables: [{ name: 'BRAVE_API_KEY', description: 'Brave Search API key', isRequired: true, isSecret: true }],
          },
        ],
        _meta: ext('@modelcontextprotocol/server-brave-search', {
          status: 'Deprecated',
          tier: 'Community',
          tags: ['search', 'web'],
          tools: ['brave_web_search', 'brave_local_search'],
          permissions: { network: { outbound: { allow_host: ['api.search.brave.com'], allow_port: [443] } } },
        }),
      },
      {
        $schema: SERVER_SCHEMA,
        name: 'com.notion/notion-remote',
        title: 'Notion',
        description: "Notion's hosted MCP server: search, read and edit pages and databases (OAuth)",
        version: '1.0.0',
        remotes: [{ type: 'streamable-http', url: 'https://mcp.notion.com/mcp' }],
        _meta: ext('https://mcp.notion.com/mcp', {
          status: 'Active',
          tier: 'Official',
          tags: ['notion', 'docs', 'remote'],
          tools: ['search', 'fetch', 'create-pages', 'update-page'],
        }),
      },
      {
        $schema: SERVER_SCHEMA,
        name: 'io.github.github/github-remote',
        title: 'GitHub (hosted)',
        description: "GitHub's hosted MCP server (OAuth or a personal access token)",
        version: '1.0.0',
        remotes: [
          {
            type: 'streamable-http',
            url: 'https://api.githubcopilot.com/mcp/',
            headers: [{ name: 'Authorization', description: 'Bearer <personal access token>, when not using OAuth', isRequired: false, isSecret: true }],
          },
        ],
        _meta: ext('https://api.githubcopilot.com/mcp/', {
          status: 'Active',
          tier: 'Official',
          tags: ['github', 'remote'],
          tools: ['get_me', 'search_repositories', 'get_file_contents', 'list_issues', 'create_issue'],
          oauth_config: { issuer: 'https://github.com/login/oauth', scopes: ['repo', 'read:org'], use_pkce: true },
        }),
      },
    ],
  },
} as const;
