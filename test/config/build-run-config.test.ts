import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ErrorCodes, ThvError } from '../../src/errors.js';
import { parseRunOptions, type RunOptions } from '../../src/config/run-options.js';
import {
  buildRunConfig,
  DEFAULT_AUDIT_CONFIG,
  defaultResourceIndicator,
  IN_MEMORY_SECRET_ENV,
  inMemorySecretsFromEnv,
  inMemorySecretsToEnv,
  withResolvedPorts,
  withTransportEnv,
  type BuildRunConfigContext,
} from '../../src/config/build-run-config.js';
import type { RunConfig } from '../../src/config/run-config.js';

let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'thv-build-run-config-'));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function opts(raw: Record<string, unknown> = {}): RunOptions {
  return parseRunOptions(raw, {}).options;
}

function build(raw: Record<string, unknown>, serverArg: string, serverArgs: string[] = [], context: BuildRunConfigContext = {}) {
  return buildRunConfig(opts(raw), serverArg, serverArgs, { cwd: dir, ...context });
}

function file(name: string, content: string): string {
  const p = path.join(dir, name);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
  return p;
}

function throwsCode(fn: () => unknown, code: string, fragment: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ThvError, 'expected a ThvError');
    assert.equal(err.code, code);
    assert.ok(err.message.includes(fragment), `message ${JSON.stringify(err.message)} lacks ${JSON.stringify(fragment)}`);
    return true;
  });
}

/** Every top-level key ToolHive's RunConfig knows (spec §1.6), plus our thv_ keys. */
const TOOLHIVE_KEYS = new Set([
  'schema_version', 'mcpserver_generation', 'image', 'remote_url', 'registry_api_url', 'registry_url',
  'registry_server_name', 'remote_auth_config', 'cmd_args', 'name', 'container_name', 'base_name', 'transport', 'host',
  'port', 'target_port', 'target_host', 'allowed_origins', 'publish', 'permission_profile_name_or_path',
  'permission_profile', 'env_vars', 'env_file_dir', 'debug', 'volumes', 'container_labels', 'oidc_config',
  'token_exchange_config', 'authz_config', 'authz_config_path', 'audit_config', 'audit_config_path', 'telemetry_config',
  'secrets', 'k8s_pod_template_patch', 'isolate_network', 'allow_docker_gateway', 'trust_proxy_headers',
  'strict_protocol_validation', 'stateless', 'session_ttl', 'proxy_mode', 'thv_ca_bundle', 'jwks_auth_token_file',
  'group', 'tools_filter', 'tools_override', 'ignore_config', 'middleware_configs', 'additional_middleware_configs',
  'validating_webhooks', 'mutating_webhooks', 'endpoint_prefix', 'runtime_config', 'header_forward',
  'thv_runtime', 'thv_stdio_sessions', 'thv_max_sessions',
]);

function assertKnownKeys(config: RunConfig): void {
  for (const key of Object.keys(config)) assert.ok(TOOLHIVE_KEYS.has(key), `unexpected RunConfig key ${key}`);
}

describe('buildRunConfig: RunConfig JSON shape', () => {
  it('builds the full RunConfig for a package on the process runtime', () => {
    const { config, inMemorySecrets, warnings } = build(
      { runtime: 'process' },
      'npx://@modelcontextprotocol/server-everything',
      ['stdio'],
    );
    assert.deepEqual(warnings, []);
    assert.deepEqual(inMemorySecrets, {});
    // Key order follows ToolHive's struct (spec §1.6).
    assert.deepEqual(JSON.parse(JSON.stringify(config)), {
      schema_version: 'v0.1.0',
      image: 'npx://@modelcontextprotocol/server-everything',
      cmd_args: ['stdio'],
      name: 'modelcontextprotocol-server-everything',
      container_name: 'modelcontextprotocol-server-everything',
      base_name: 'modelcontextprotocol-server-everything',
      transport: 'stdio',
      host: '127.0.0.1',
      port: 0,
      target_host: '127.0.0.1',
      permission_profile: { name: 'network', network: { outbound: { insecure_allow_all: true }, inbound: {} } },
      env_vars: { MCP_TRANSPORT: 'stdio' },
      container_labels: {
        toolhive: 'true',
        'toolhive-name': 'modelcontextprotocol-server-everything',
        'toolhive-basename': 'modelcontextprotocol-server-everything',
        'toolhive-transport': 'stdio',
        'toolhive-port': '0',
      },
      isolate_network: true,
      proxy_mode: 'streamable-http',
      group: 'default',
      ignore_config: { LoadGlobal: true, PrintOverlays: false },
      thv_runtime: 'process',
      thv_stdio_sessions: 'per-session',
      thv_max_sessions: 100,
    });
    assert.deepEqual(Object.keys(config).slice(0, 3), ['schema_version', 'image', 'cmd_args']);
  });

  it('uses only ToolHive keys (and thv_ ones) even with every block filled', () => {
    const override = file('override.json', '{"toolsOverride": {"fetch": {"name": "get"}}}');
    const { config } = build(
      {
        runtime: 'docker',
        transport: 'sse',
        targetPort: '8080',
        proxyPort: '9000',
        publish: ['9090:90'],
        allowedOrigins: ['https://app.example'],
        trustProxyHeaders: true,
        endpointPrefix: '/prefix',
        stateless: true,
        sessionTtl: '30m',
        strictProtocolValidation: true,
        secret: ['gh,target=GITHUB_TOKEN'],
        tools: ['get'],
        toolsOverride: override,
        oidcIssuer: 'https://issuer.example',
        otelEndpoint: 'https://otel.example',
        enableAudit: true,
        debug: true,
        allowDockerGateway: true,
        runtimeImage: 'node:22-alpine',
        k8sPodPatch: '{}',
        thvCaBundle: '/ca.pem',
        jwksAuthTokenFile: '/token',
        tokenExchangeUrl: 'https://sts.example/token',
      },
      'ghcr.io/acme/server:1.0',
    );
    assertKnownKeys(config);
    assert.equal(config.target_port, 8080);
    assert.equal(config.port, 9000);
    assert.deepEqual(config.publish, ['9090:90']);
    assert.deepEqual(config.allowed_origins, ['https://app.example']);
    assert.equal(config.trust_proxy_headers, true);
    assert.equal(config.endpoint_prefix, '/prefix');
    assert.equal(config.stateless, true);
    assert.equal(config.session_ttl, '30m0s');
    assert.equal(config.strict_protocol_validation, true);
    assert.deepEqual(config.secrets, ['gh,target=GITHUB_TOKEN']);
    assert.deepEqual(config.tools_filter, ['get']);
    assert.deepEqual(config.tools_override, { fetch: { name: 'get' } });
    assert.equal(config.debug, true);
    assert.equal(config.allow_docker_gateway, true);
    assert.deepEqual(config.runtime_config, { builder_image: 'node:22-alpine' });
    assert.equal(config.thv_ca_bundle, '/ca.pem');
    assert.equal(config.jwks_auth_token_file, '/token');
    assert.equal(config.proxy_mode, 'sse');
    assert.equal(config.thv_runtime, 'docker');
  });

  it('omits false booleans and empty lists, as Go omitempty does', () => {
    const { config } = build({ runtime: 'process', isolateNetwork: false }, './server.js');
    for (const key of ['debug', 'isolate_network', 'stateless', 'trust_proxy_headers', 'secrets', 'volumes', 'publish', 'tools_filter', 'cmd_args']) {
      assert.ok(!(key in config), `${key} should be omitted`);
    }
  });
});

describe('buildRunConfig: transport defaults', () => {
  it('defaults packages and local paths to stdio on the process runtime', () => {
    assert.equal(build({ runtime: 'process' }, 'npx://pkg').config.transport, 'stdio');
    assert.equal(build({ runtime: 'process' }, 'uvx://mcp-server-fetch').config.transport, 'stdio');
    assert.equal(build({ runtime: 'process' }, 'go://github.com/acme/mcp').config.transport, 'stdio');
    assert.equal(build({ runtime: 'process' }, './server.py').config.transport, 'stdio');
  });

  it('keeps ToolHive\'s streamable-http default elsewhere (quirk 1)', () => {
    assert.equal(build({ runtime: 'docker' }, 'npx://pkg').config.transport, 'streamable-http');
    assert.equal(build({ runtime: 'docker' }, 'ghcr.io/acme/server').config.transport, 'streamable-http');
    assert.equal(build({ runtime: 'process' }, 'ghcr.io/acme/server').config.transport, 'streamable-http');
    const auto = build({}, 'npx://pkg').config;
    assert.equal(auto.transport, 'streamable-http');
    assert.ok(!('thv_runtime' in auto), 'unresolved auto runtime is not recorded');
  });

  it('lets --transport and then the registry entry win over the default', () => {
    assert.equal(build({ runtime: 'process', transport: 'sse' }, 'npx://pkg').config.transport, 'sse');
    const fromRegistry = build({ runtime: 'docker' }, 'fetch', [], {
      registry: { name: 'io.github.stacklok/fetch', image: 'ghcr.io/stackloklabs/gofetch/server:1.0', transport: 'stdio' },
    });
    assert.equal(fromRegistry.config.transport, 'stdio');
    assert.equal(build({ runtime: 'docker', transport: 'sse' }, 'fetch', [], { registry: { name: 'fetch', transport: 'stdio' } }).config.transport, 'sse');
  });

  it('treats a local path under the auto runtime as a process', () => {
    const { config } = build({}, './weather/index.js');
    assert.equal(config.thv_runtime, 'process');
    assert.equal(config.transport, 'stdio');
    assert.equal(config.name, 'weather');
  });

  it('normalises proxy_mode: the configured mode for stdio, the transport otherwise', () => {
    assert.equal(build({ runtime: 'process', proxyMode: 'sse' }, 'npx://pkg').config.proxy_mode, 'sse');
    assert.equal(build({ runtime: 'process', proxyMode: 'sse', transport: 'streamable-http' }, 'npx://pkg').config.proxy_mode, 'streamable-http');
    assert.equal(build({ runtime: 'docker', transport: 'sse' }, 'img').config.proxy_mode, 'sse');
  });

  it('rejects --stateless with a stdio server', () => {
    throwsCode(() => build({ runtime: 'process', stateless: true }, 'npx://pkg'), ErrorCodes.InvalidArgument, '--stateless requires the sse or streamable-http transport');
  });
});

describe('buildRunConfig: names and images', () => {
  it('derives names per spec §1.3', () => {
    assert.equal(build({ runtime: 'docker' }, 'ghcr.io/github/github-mcp-server:latest').config.name, 'github-github-mcp-server');
    assert.equal(build({}, 'https://api.github.com/mcp').config.name, 'github');
    assert.equal(build({ runtime: 'docker' }, 'io.github.stacklok/fetch', [], { registry: { name: 'io.github.stacklok/fetch' } }).config.name, 'io-github-stacklok-fetch');
  });

  it('sanitises --name with a warning and uses it for container_name and base_name', () => {
    const { config, warnings } = build({ runtime: 'process', name: 'my server' }, 'npx://pkg');
    assert.equal(config.name, 'my-server');
    assert.equal(config.container_name, 'my-server');
    assert.equal(config.base_name, 'my-server');
    assert.equal(config.container_labels?.['toolhive-basename'], 'my-server');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] as string, /contained invalid characters and was sanitized/);
  });

  it('persists the image given in context (e.g. a built protocol image) and the registry provenance', () => {
    const { config } = build({ runtime: 'docker' }, 'fetch', [], {
      image: 'toolhivelocal/npx-x:20260101000000',
      registry: { name: 'io.github.stacklok/fetch', registryApiUrl: 'https://registry.example/api', args: ['--default'] },
    });
    assert.equal(config.image, 'toolhivelocal/npx-x:20260101000000');
    assert.equal(config.registry_server_name, 'io.github.stacklok/fetch');
    assert.equal(config.registry_api_url, 'https://registry.example/api');
    assert.deepEqual(config.cmd_args, ['--default'], 'registry args apply without -- args');
    assert.deepEqual(build({ runtime: 'docker' }, 'fetch', ['--mine'], { registry: { name: 'fetch', args: ['--default'] } }).config.cmd_args, ['--mine']);
  });

  it('rejects an empty protocol package and --build-with outside uvx', () => {
    throwsCode(() => build({ runtime: 'process' }, 'npx://'), ErrorCodes.InvalidArgument, 'invalid protocol scheme provided for MCP server');
    throwsCode(() => build({ runtime: 'docker', buildWith: ['httpx'] }, 'npx://pkg'), ErrorCodes.InvalidArgument, '--build-with is only supported for uvx:// packages');
    assert.deepEqual(build({ runtime: 'docker', buildWith: ['httpx>=0.27'] }, 'uvx://pkg').config.runtime_config, { build_with: ['httpx>=0.27'] });
  });
});

describe('buildRunConfig: environment and ports', () => {
  it('merges env files, then --env, then the transport variables', () => {
    const envDir = path.join(dir, 'envdir');
    file('envdir/a.env', 'FROM_DIR=1\nSHARED=dir\n');
    file('envdir/.hidden', 'HIDDEN=1\n');
    fs.mkdirSync(path.join(envDir, 'sub'));
    const envFile = file('app.env', '# comment\n\nexport FROM_FILE="quoted"\nSHARED=file\nnot a pair\n');
    const { config } = build({ runtime: 'process', envFileDir: envDir, envFile, env: ['SHARED=flag', 'MCP_TRANSPORT=ignored'] }, 'npx://pkg');
    assert.deepEqual(config.env_vars, {
      FROM_DIR: '1',
      SHARED: 'flag',
      FROM_FILE: '"quoted"',
      MCP_TRANSPORT: 'stdio',
    });
  });

  it('fails on an unreadable --env-file and ignores a missing --env-file-dir', () => {
    throwsCode(() => build({ runtime: 'process', envFile: path.join(dir, 'nope.env') }, 'npx://pkg'), ErrorCodes.InvalidConfig, 'failed to process env file');
    assert.doesNotThrow(() => build({ runtime: 'process', envFileDir: path.join(dir, 'missing') }, 'npx://pkg'));
  });

  it('sets MCP_PORT and FASTMCP_PORT for HTTP servers with a known target port', () => {
    const { config } = build({ runtime: 'docker', targetPort: '8080' }, 'img');
    assert.deepEqual(config.env_vars, { MCP_TRANSPORT: 'streamable-http', MCP_PORT: '8080', FASTMCP_PORT: '8080' });
    const unknownPort = build({ runtime: 'docker' }, 'img').config;
    assert.deepEqual(unknownPort.env_vars, { MCP_TRANSPORT: 'streamable-http' });
    assert.ok(!('target_port' in unknownPort));
  });

  it('ignores --target-port for stdio servers and uses registry ports for HTTP ones', () => {
    assert.ok(!('target_port' in build({ runtime: 'process', targetPort: '8080' }, 'npx://pkg').config));
    const { config } = build({ runtime: 'docker' }, 'fetch', [], { registry: { name: 'fetch', transport: 'sse', targetPort: 8080, proxyPort: 9000 } });
    assert.equal(config.target_port, 8080);
    assert.equal(config.port, 9000);
  });

  it('withTransportEnv and withResolvedPorts fill in ports chosen at start', () => {
    const base = build({ runtime: 'docker' }, 'img').config;
    assert.deepEqual(withTransportEnv(base, 7000).env_vars, { MCP_TRANSPORT: 'streamable-http', MCP_PORT: '7000', FASTMCP_PORT: '7000' });
    const resolved = withResolvedPorts(base, { port: 41000, targetPort: 42000 });
    assert.equal(resolved.port, 41000);
    assert.equal(resolved.target_port, 42000);
    assert.equal(resolved.container_labels?.['toolhive-port'], '41000');
    assert.equal(resolved.env_vars?.['MCP_PORT'], '42000');
    assert.equal(base.port, 0, 'the input is not modified');
    const stdio = withResolvedPorts(build({ runtime: 'process' }, 'npx://pkg').config, { port: 41000, targetPort: 42000 });
    assert.ok(!('target_port' in stdio));
    assert.deepEqual(stdio.env_vars, { MCP_TRANSPORT: 'stdio' });
  });
});

describe('buildRunConfig: labels, tools and policy files', () => {
  it('lets standard labels win over user labels', () => {
    const { config } = build({ runtime: 'process', label: ['team=a', 'toolhive-name=spoof'] }, 'npx://pkg');
    assert.equal(config.container_labels?.['team'], 'a');
    assert.equal(config.container_labels?.['toolhive-name'], 'pkg');
  });

  it('checks --tools and override keys against the registry tool list', () => {
    const override = file('o.json', '{"toolsOverride": {"fetch": {"name": "renamed"}}}');
    const registry = { name: 'fetch', tools: ['fetch'] };
    assert.doesNotThrow(() => build({ runtime: 'docker', tools: ['renamed'], toolsOverride: override }, 'fetch', [], { registry }));
    throwsCode(() => build({ runtime: 'docker', tools: ['wrong-tool'] }, 'fetch', [], { registry }), ErrorCodes.InvalidArgument, 'tool wrong-tool not found in registry');
    const badOverride = file('bad.json', '{"toolsOverride": {"other": {"name": "x"}}}');
    throwsCode(() => build({ runtime: 'docker', toolsOverride: badOverride }, 'fetch', [], { registry }), ErrorCodes.InvalidArgument, 'tool other not found in registry');
  });

  it('propagates tools-override file errors', () => {
    throwsCode(() => build({ runtime: 'process', toolsOverride: path.join(dir, 'none.json') }, 'npx://pkg'), ErrorCodes.InvalidConfig, 'failed to open tools override file');
  });

  it('stores the default audit config for --enable-audit and the file for --audit-config', () => {
    assert.deepEqual(build({ runtime: 'process', enableAudit: true }, 'npx://pkg').config.audit_config, DEFAULT_AUDIT_CONFIG);
    const audit = file('audit.json', '{"component": "x", "logFile": "/tmp/a.log"}');
    const { config } = build({ runtime: 'process', auditConfig: audit }, 'npx://pkg');
    assert.deepEqual(config.audit_config, { component: 'x', logFile: '/tmp/a.log' });
    assert.equal(config.audit_config_path, audit);
    throwsCode(() => build({ runtime: 'process', auditConfig: file('bad.json', '{') }, 'npx://pkg'), ErrorCodes.InvalidConfig, 'failed to parse audit configuration');
  });

  it('loads --authz-config from YAML or JSON', () => {
    const authz = file('authz.yaml', 'version: "1.0"\ntype: cedarv1\ncedar:\n  policies: []\n  entities_json: "[]"\n');
    const { config } = build({ runtime: 'process', authzConfig: authz }, 'npx://pkg');
    assert.deepEqual(config.authz_config, { version: '1.0', type: 'cedarv1', cedar: { policies: [], entities_json: '[]' } });
    assert.equal(config.authz_config_path, authz);
    throwsCode(() => build({ runtime: 'process', authzConfig: file('authz.txt', '{}') }, 'npx://pkg'), ErrorCodes.InvalidConfig, 'must be a .json, .yaml or .yml file');
  });

  it('merges --webhook-config files by name and stores timeouts in nanoseconds', () => {
    const a = file('a.yaml', 'validating:\n  - name: policy\n    url: https://hooks.example/v\n    timeout: 5s\n    failure_policy: fail\n');
    const b = file('b.json', JSON.stringify({
      validating: [{ name: 'policy', url: 'https://hooks.example/v2', failure_policy: 'ignore' }],
      mutating: [{ name: 'm', url: 'http://localhost:9/m', failure_policy: 'fail', tls_config: { insecure_skip_verify: true } }],
    }));
    const { config } = build({ runtime: 'process', webhookConfig: [a, b] }, 'npx://pkg');
    assert.deepEqual(config.validating_webhooks, [{ name: 'policy', url: 'https://hooks.example/v2', failure_policy: 'ignore' }]);
    assert.equal((config.mutating_webhooks as Array<Record<string, unknown>>)[0]?.['name'], 'm');
    const timed = build({ runtime: 'process', webhookConfig: [a] }, 'npx://pkg').config;
    assert.equal((timed.validating_webhooks as Array<Record<string, unknown>>)[0]?.['timeout'], 5_000_000_000);
    const insecure = file('c.yaml', 'validating:\n  - name: x\n    url: http://hooks.example\n    failure_policy: fail\n');
    throwsCode(() => build({ runtime: 'process', webhookConfig: [insecure] }, 'npx://pkg'), ErrorCodes.InvalidConfig, 'url must use https');
    const slow = file('d.yaml', 'validating:\n  - name: x\n    url: https://h\n    failure_policy: fail\n    timeout: 1m\n');
    throwsCode(() => build({ runtime: 'process', webhookConfig: [slow] }, 'npx://pkg'), ErrorCodes.InvalidConfig, 'timeout must be between 1s and 30s');
  });
});

describe('buildRunConfig: permission profile, network and volumes', () => {
  it('resolves built-in and file profiles', () => {
    assert.deepEqual(build({ runtime: 'docker', permissionProfile: 'none' }, 'img').config.permission_profile, {
      name: 'none',
      network: { outbound: {}, inbound: {} },
    });
    assert.equal(build({ runtime: 'docker', permissionProfile: 'stdio' }, 'img').config.permission_profile?.['name'], 'none');
    const profile = file('profile.json', '{"read": ["/data"], "network": {"outbound": {"allow_host": ["api.example.com"], "allow_port": [443]}}}');
    const { config } = build({ runtime: 'docker', permissionProfile: profile }, 'img');
    assert.equal(config.permission_profile_name_or_path, profile);
    assert.deepEqual(config.permission_profile, { read: ['/data'], network: { outbound: { allow_host: ['api.example.com'], allow_port: [443] } } });
    assert.deepEqual(build({ runtime: 'docker' }, 'img', [], { registry: { name: 'x', permissions: { name: 'reg' } } }).config.permission_profile, { name: 'reg' });
  });

  it('writes --network into the profile and reconciles isolation', () => {
    const none = build({ runtime: 'docker', network: 'none' }, 'img');
    assert.equal((none.config.permission_profile?.['network'] as Record<string, unknown>)['mode'], 'none');
    assert.ok(!('isolate_network' in none.config));
    assert.deepEqual(none.warnings, []);

    const host = build({ runtime: 'docker', network: 'host' }, 'img');
    assert.ok(!('isolate_network' in host.config));
    assert.equal(host.warnings.length, 1);

    throwsCode(() => build({ runtime: 'docker', network: 'host', isolateNetwork: true }, 'img'), ErrorCodes.InvalidArgument, 'network isolation cannot be enforced with the resolved network mode "host"');
    assert.equal(build({ runtime: 'docker', network: 'bridge', isolateNetwork: true }, 'img').config.isolate_network, true);
  });

  it('adds --volume mounts to the profile', () => {
    fs.mkdirSync(path.join(dir, 'data'));
    fs.mkdirSync(path.join(dir, 'cache'));
    const { config, warnings } = build({ runtime: 'docker', volume: ['./data:/data:ro', `${dir}/cache:/cache`, './data:/data'] }, 'img');
    assert.deepEqual(config.permission_profile?.['read'], ['./data:/data']);
    assert.deepEqual(config.permission_profile?.['write'], [`${dir}/cache:/cache`]);
    assert.deepEqual(config.volumes, ['./data:/data:ro', `${dir}/cache:/cache`, './data:/data']);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] as string, /duplicate mount target \/data/);
    throwsCode(() => build({ runtime: 'docker', volume: ['./missing:/x'] }, 'img'), ErrorCodes.InvalidArgument, 'volume source path does not exist');
    throwsCode(() => build({ runtime: 'docker', volume: ['/a:/b:/c:/d'] }, 'img'), ErrorCodes.InvalidArgument, 'invalid mount declaration format');
  });
});

describe('buildRunConfig: auth and telemetry', () => {
  it('writes oidc_config with PascalCase keys and never the client secret', () => {
    const { config, inMemorySecrets } = build(
      {
        runtime: 'process',
        oidcIssuer: 'https://issuer.example',
        oidcAudience: 'mcp',
        oidcClientId: 'client',
        oidcClientSecret: 'super-secret-value',
        oidcIntrospectionUrl: 'https://issuer.example/introspect',
        resourceUrl: 'https://mcp.example/mcp',
        thvCaBundle: '/ca.pem',
      },
      'npx://pkg',
    );
    assert.deepEqual(config.oidc_config, {
      Issuer: 'https://issuer.example',
      Audience: 'mcp',
      JWKSURL: '',
      ClientID: 'client',
      ClientSecret: '',
      CACertPath: '/ca.pem',
      AuthTokenFile: '',
      AllowPrivateIP: false,
      InsecureAllowHTTP: false,
      IntrospectionURL: 'https://issuer.example/introspect',
      ResourceURL: 'https://mcp.example/mcp',
      Scopes: ['openid'],
    });
    assert.deepEqual(inMemorySecrets, { oidcClientSecret: 'super-secret-value' });
    assert.ok(!JSON.stringify(config).includes('super-secret-value'));
  });

  it('creates an oidc_config for --resource-url alone and none without OIDC flags', () => {
    assert.equal(build({ runtime: 'process', resourceUrl: 'https://mcp.example' }, 'npx://pkg').config.oidc_config?.ResourceURL, 'https://mcp.example');
    assert.ok(!('oidc_config' in build({ runtime: 'process' }, 'npx://pkg').config));
  });

  it('writes telemetry_config only when an endpoint or the Prometheus path is set', () => {
    assert.ok(!('telemetry_config' in build({ runtime: 'process' }, 'npx://pkg').config));
    const { config } = build(
      { runtime: 'process', otelEndpoint: 'https://otel.example', otelHeaders: ['k=v'], otelEnvVars: ['HOME'], otelCustomAttributes: 'env=prod' },
      'npx://pkg',
    );
    assert.deepEqual(config.telemetry_config, {
      endpoint: 'https://otel.example',
      serviceName: 'thv-pkg',
      tracingEnabled: true,
      metricsEnabled: true,
      samplingRate: '0.1',
      headers: { k: 'v' },
      insecure: false,
      enablePrometheusMetricsPath: false,
      environmentVariables: ['HOME'],
      customAttributes: { env: 'prod' },
      useLegacyAttributes: true,
    });
    const prom = build({ runtime: 'process', otelEnablePrometheusMetricsPath: true, otelServiceName: 'svc' }, 'npx://pkg').config.telemetry_config;
    assert.equal(prom?.enablePrometheusMetricsPath, true);
    assert.equal(prom?.serviceName, 'svc');
    assert.ok(!('endpoint' in (prom ?? {})));
    assert.ok(!('telemetry_config' in build({ runtime: 'process', otelEndpoint: 'https://o', otelTracingEnabled: false, otelMetricsEnabled: false }, 'npx://pkg').config));
  });

  it('falls back to config.yaml otel values for flags not given', () => {
    const otelDefaults = { endpoint: 'https://from-config', samplingRate: 0.5, insecure: true, envVars: ['USER'] };
    const fromConfig = build({ runtime: 'process' }, 'npx://pkg', [], { otelDefaults }).config.telemetry_config;
    assert.equal(fromConfig?.endpoint, 'https://from-config');
    assert.equal(fromConfig?.samplingRate, '0.5');
    assert.equal(fromConfig?.insecure, true);
    assert.deepEqual(fromConfig?.environmentVariables, ['USER']);
    const flagsWin = build({ runtime: 'process', otelEndpoint: 'https://flag', otelSamplingRate: '0.2', otelInsecure: false }, 'npx://pkg', [], { otelDefaults }).config.telemetry_config;
    assert.equal(flagsWin?.endpoint, 'https://flag');
    assert.equal(flagsWin?.samplingRate, '0.2');
    assert.equal(flagsWin?.insecure, false);
  });

  it('writes token_exchange_config without the client secret', () => {
    const { config, inMemorySecrets } = build(
      {
        runtime: 'process',
        tokenExchangeUrl: 'https://sts.example/token',
        tokenExchangeClientId: 'cid',
        tokenExchangeClientSecret: 'tx-secret',
        tokenExchangeAudience: 'backend',
        tokenExchangeScopes: ['read', 'write'],
        tokenExchangeSubjectTokenType: 'id_token',
      },
      'npx://pkg',
    );
    assert.deepEqual(config.token_exchange_config, {
      token_url: 'https://sts.example/token',
      client_id: 'cid',
      audience: 'backend',
      scopes: ['read', 'write'],
      subject_token_type: 'id_token',
      header_strategy: 'replace',
    });
    assert.deepEqual(inMemorySecrets, { tokenExchangeClientSecret: 'tx-secret' });
    const custom = build({ runtime: 'process', tokenExchangeUrl: 'https://sts.example', tokenExchangeHeaderName: 'X-Upstream-Token', tokenExchangeClientSecretFile: '/secret' }, 'npx://pkg').config;
    assert.deepEqual(custom.token_exchange_config, {
      token_url: 'https://sts.example',
      header_strategy: 'custom',
      external_token_header_name: 'X-Upstream-Token',
      thv_client_secret_file: '/secret',
    });
  });
});

describe('buildRunConfig: remote servers', () => {
  it('builds a remote workload with an auto-detected remote_auth_config', () => {
    const { config, inMemorySecrets, warnings } = build({ env: ['A=1'] }, 'https://api.github.com/mcp?toolsets=repos');
    assert.equal(config.remote_url, 'https://api.github.com/mcp?toolsets=repos');
    assert.equal(config.image, 'https://api.github.com/mcp?toolsets=repos');
    assert.equal(config.name, 'github');
    assert.equal(config.transport, 'streamable-http');
    assert.equal(config.target_host, 'api.github.com');
    assert.deepEqual(config.remote_auth_config, { timeout: 30_000_000_000, callback_port: 8666, use_pkce: false });
    assert.deepEqual(config.env_vars, { MCP_TRANSPORT: 'streamable-http' });
    assert.ok(!('thv_runtime' in config));
    assert.deepEqual(inMemorySecrets, {});
    assert.deepEqual(warnings, ['--env is ignored for remote servers']);
    assertKnownKeys(config);
  });

  it('fills remote auth settings, keeps secret values in memory and files by path', () => {
    const { config, inMemorySecrets } = build(
      {
        remoteAuthClientId: 'cid',
        remoteAuthClientSecret: 'oauth-secret',
        remoteAuthScopes: ['repo', 'read:org'],
        remoteAuthSkipBrowser: true,
        remoteAuthTimeout: '2m',
        remoteAuthCallbackPort: '9999',
        remoteAuthIssuer: 'https://issuer.example',
        remoteAuthBearerTokenFile: '/run/token',
        remoteAuthScopeParamName: 'user_scope',
        resourceUrl: 'https://local.example/mcp',
        transport: 'sse',
      },
      'HTTPS://MCP.Example.COM:8443/sse#frag',
    );
    assert.deepEqual(config.remote_auth_config, {
      client_id: 'cid',
      scopes: ['repo', 'read:org'],
      skip_browser: true,
      timeout: 120_000_000_000,
      callback_port: 9999,
      use_pkce: false,
      resource: 'https://mcp.example.com:8443/sse',
      issuer: 'https://issuer.example',
      scope_param_name: 'user_scope',
      bearer_token_file: '/run/token',
    });
    assert.equal(config.transport, 'sse');
    assert.deepEqual(inMemorySecrets, { remoteAuthClientSecret: 'oauth-secret' });
    assert.ok(!JSON.stringify(config).includes('oauth-secret'));
  });

  it('keeps a literal bearer token out of the config', () => {
    const { config, inMemorySecrets } = build({ remoteAuthBearerToken: 'bearer-value', remoteAuthBearerTokenFile: '/ignored' }, 'https://mcp.example/mcp');
    assert.deepEqual(inMemorySecrets, { remoteAuthBearerToken: 'bearer-value' });
    assert.ok(!JSON.stringify(config).includes('bearer-value'));
    assert.ok(!('bearer_token_file' in (config.remote_auth_config ?? {})));
  });

  it('writes header forwarding for remote servers only', () => {
    const { config } = build(
      { remoteForwardHeaders: ['X-Tenant=acme'], remoteForwardHeadersSecret: ['X-Api-Key=api-key-secret'] },
      'https://mcp.example/mcp',
    );
    assert.deepEqual(config.header_forward, {
      add_plaintext_headers: { 'X-Tenant': 'acme' },
      add_headers_from_secret: { 'X-Api-Key': 'api-key-secret' },
    });
    const local = build({ runtime: 'process', remoteForwardHeaders: ['X-Tenant=acme'] }, 'npx://pkg');
    assert.ok(!('header_forward' in local.config));
    assert.match(local.warnings.join('\n'), /only apply to remote servers/);
  });

  it('uses the registry entry URL for remote registry servers', () => {
    const { config } = build({}, 'github', [], { registry: { name: 'github', remoteUrl: 'https://api.githubcopilot.com/mcp/', proxyPort: 9100 } });
    assert.equal(config.remote_url, 'https://api.githubcopilot.com/mcp/');
    assert.equal(config.image, 'github');
    assert.equal(config.name, 'github');
    assert.equal(config.port, 9100);
  });

  it('derives the RFC 8707 resource like ToolHive', () => {
    assert.equal(defaultResourceIndicator('HTTPS://API.Example.com/MCP?x=1#f'), 'https://api.example.com/MCP?x=1');
    assert.equal(defaultResourceIndicator('https://example.com'), 'https://example.com');
    assert.equal(defaultResourceIndicator('no-scheme'), undefined);
  });
});

describe('in-memory secrets', () => {
  it('round-trip through the environment of a detached proxy', () => {
    const secrets = { oidcClientSecret: 'a', remoteAuthBearerToken: 'b' };
    const env = inMemorySecretsToEnv(secrets);
    assert.deepEqual(env, { [IN_MEMORY_SECRET_ENV.oidcClientSecret]: 'a', TOOLHIVE_REMOTE_AUTH_BEARER_TOKEN: 'b' });
    assert.deepEqual(inMemorySecretsFromEnv(env), secrets);
  });
});
