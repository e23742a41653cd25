import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { ErrorCodes, ThvError } from '../../src/errors.js';
import { addRunFlags, normaliseRunArgs, RUN_FLAG_SPECS, splitServerArgs } from '../../src/config/run-flags.js';
import {
  formatDuration,
  formatDurationNs,
  parseDuration,
  parseDurationNs,
  parseRunOptions,
  resolveHostToIPv4,
  RunOptionsSchema,
  type RunOptions,
} from '../../src/config/run-options.js';

/** Parses `thv run <args>` with commander and returns the raw options and the positional server. */
function cli(args: string[]): { raw: Record<string, unknown>; server: string | undefined } {
  const program = new Command('thv').exitOverride();
  const run = program.command('run').argument('[server]').exitOverride();
  addRunFlags(run);
  let result: { raw: Record<string, unknown>; server: string | undefined } | undefined;
  run.action((server: string | undefined, opts: Record<string, unknown>) => {
    result = { raw: opts, server };
  });
  program.parse(['run', ...args], { from: 'user' });
  assert.ok(result);
  return result;
}

function options(raw: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): RunOptions {
  return parseRunOptions(raw, env).options;
}

/** Asserts that parsing fails with InvalidArgument and a message containing every fragment. */
function rejects(raw: Record<string, unknown>, ...fragments: string[]): void {
  rejectsWithEnv(raw, {}, ...fragments);
}

function rejectsWithEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, ...fragments: string[]): void {
  assert.throws(
    () => parseRunOptions(raw, env),
    (err: unknown) => {
      assert.ok(err instanceof ThvError, 'expected a ThvError');
      assert.equal(err.code, ErrorCodes.InvalidArgument);
      for (const f of fragments) assert.ok(err.message.includes(f), `message ${JSON.stringify(err.message)} lacks ${JSON.stringify(f)}`);
      return true;
    },
  );
}

describe('addRunFlags', () => {
  it('registers every flag of the spec table', () => {
    const run = addRunFlags(new Command('run'));
    const longs = new Set(run.options.map((o) => o.long));
    const expected = [
      'transport', 'proxy-mode', 'name', 'group', 'host', 'proxy-port', 'target-port', 'target-host', 'publish',
      'permission-profile', 'env', 'env-file', 'env-file-dir', 'volume', 'secret', 'label', 'network', 'isolate-network',
      'allow-docker-gateway', 'foreground', 'from-config', 'tools', 'tools-override', 'authz-config', 'audit-config',
      'enable-audit', 'oidc-issuer', 'oidc-audience', 'oidc-jwks-url', 'oidc-introspection-url', 'oidc-client-id',
      'oidc-client-secret', 'oidc-scopes', 'oidc-insecure-allow-http', 'resource-url', 'thv-ca-bundle',
      'jwks-auth-token-file', 'jwks-allow-private-ip', 'trust-proxy-headers', 'endpoint-prefix', 'stateless',
      'session-ttl', 'strict-protocol-validation', 'allowed-origins', 'image-verification', 'ca-cert', 'runtime-image',
      'runtime-add-package', 'build-with', 'ignore-globally', 'print-resolved-overlays', 'webhook-config', 'remote-auth',
      'remote-auth-client-id', 'remote-auth-client-secret', 'remote-auth-client-secret-file', 'remote-auth-scopes',
      'remote-auth-skip-browser', 'remote-auth-timeout', 'remote-auth-callback-port', 'remote-auth-issuer',
      'remote-auth-authorize-url', 'remote-auth-token-url', 'remote-auth-resource', 'remote-auth-bearer-token',
      'remote-auth-bearer-token-file', 'remote-forward-headers', 'remote-forward-headers-secret', 'token-exchange-url',
      'token-exchange-client-id', 'token-exchange-client-secret', 'token-exchange-client-secret-file',
      'token-exchange-audience', 'token-exchange-scopes', 'token-exchange-subject-token-type',
      'token-exchange-header-name', 'otel-endpoint', 'otel-headers', 'otel-insecure', 'otel-service-name',
      'otel-tracing-enabled', 'otel-metrics-enabled', 'otel-sampling-rate', 'otel-env-vars', 'otel-custom-attributes',
      'otel-enable-prometheus-metrics-path', 'otel-use-legacy-attributes', 'runtime', 'stdio-sessions', 'max-sessions',
      'debug',
    ];
    for (const flag of expected) assert.ok(longs.has(`--${flag}`), `--${flag} is missing`);
    for (const short of ['-p', '-e', '-v', '-l', '-f']) assert.ok(run.options.some((o) => o.short === short), `${short} is missing`);
  });

  it('gives every flag a one-line help text and a help group', () => {
    for (const spec of RUN_FLAG_SPECS) {
      assert.ok(spec.help.length > 10 && !spec.help.includes('\n'), spec.name);
      assert.ok(spec.group.endsWith(':'), spec.name);
    }
    const help = addRunFlags(new Command('run')).helpInformation();
    assert.ok(help.includes('Telemetry options:'));
    assert.ok(help.includes('--stdio-sessions <mode>'));
    assert.ok(!help.includes('--no-isolate-network'), 'negations stay hidden');
    assert.ok(!help.includes('--k8s-pod-patch'), 'the Kubernetes-only flag stays hidden');
  });

  it('collects repeatable flags into arrays without splitting on commas', () => {
    const { raw, server } = cli(['--tools', 'a,b', '--tools', 'c', '-e', 'A=1', '--env', 'B=2', '-v', '/x:/y', 'fetch']);
    assert.equal(server, 'fetch');
    assert.deepEqual(raw['tools'], ['a,b', 'c']);
    assert.deepEqual(raw['env'], ['A=1', 'B=2']);
    assert.deepEqual(raw['volume'], ['/x:/y']);
    assert.deepEqual(options(raw).tools, ['a,b', 'c']);
  });

  it('splits and accumulates comma-slice flags', () => {
    const { raw } = cli(['--oidc-scopes', 'openid, profile', '--oidc-scopes', 'email', '--remote-auth-scopes', 'a,b', 'x']);
    assert.deepEqual(raw['oidcScopes'], ['openid', 'profile', 'email']);
    assert.deepEqual(options(raw).remoteAuth.scopes, ['a', 'b']);
  });

  it('accepts Go-style boolean spellings', () => {
    assert.equal(options(cli(['--isolate-network=false', 'x']).raw).isolateNetwork, false);
    assert.equal(options(cli(['--no-isolate-network', 'x']).raw).isolateNetwork, false);
    assert.equal(options(cli(['--isolate-network=true', 'x']).raw).isolateNetwork, true);
    assert.equal(options(cli(['--stateless=1', 'x']).raw).stateless, true);
    assert.equal(options(cli(['--otel-tracing-enabled=false', 'x']).raw).otel.tracingEnabled, false);
    assert.equal(options(cli(['--foreground', 'x']).raw).foreground, true);
    assert.equal(options(cli(['-f', 'x']).raw).foreground, true);
    assert.equal(options(cli(['-f=false', 'x']).raw).foreground, false);
  });

  it('rejects an unparsable boolean value', () => {
    assert.throws(
      () => cli(['--stateless=maybe', 'x']),
      (err: unknown) => err instanceof ThvError && err.code === ErrorCodes.InvalidArgument && err.message === '--stateless: expected true or false, got "maybe"',
    );
  });

  it('accepts pflag-style -e=VALUE and --flag=value', () => {
    const { raw } = cli(['-e=KEY=VALUE', '--transport=sse', '--proxy-port=8080', 'x']);
    assert.deepEqual(raw['env'], ['KEY=VALUE']);
    const o = options(raw);
    assert.equal(o.transport, 'sse');
    assert.equal(o.proxyPort, 8080);
    assert.deepEqual(o.env, { KEY: 'VALUE' });
  });

  it('leaves arguments after -- untouched when normalising', () => {
    assert.deepEqual(normaliseRunArgs(['--stateless=false', '--', '--stateless=maybe']), ['--no-stateless', '--', '--stateless=maybe']);
  });
});

describe('splitServerArgs', () => {
  it('splits at the first literal --', () => {
    assert.deepEqual(splitServerArgs(['run', 'fetch', '--', '--port', '1', '--', 'x']), {
      before: ['run', 'fetch'],
      after: ['--port', '1', '--', 'x'],
    });
  });

  it('yields no server arguments without -- or with a trailing --', () => {
    assert.deepEqual(splitServerArgs(['run', 'fetch']), { before: ['run', 'fetch'], after: [] });
    assert.deepEqual(splitServerArgs(['run', 'fetch', '--']), { before: ['run', 'fetch'], after: [] });
  });
});

describe('parseRunOptions defaults', () => {
  it('applies ToolHive defaults and ours when nothing is given', () => {
    const { options: o, warnings } = parseRunOptions({}, {});
    assert.deepEqual(warnings, []);
    assert.equal(o.transport, undefined);
    assert.equal(o.proxyMode, 'streamable-http');
    assert.equal(o.host, '127.0.0.1');
    assert.equal(o.proxyPort, 0);
    assert.equal(o.targetPort, 0);
    assert.equal(o.targetHost, '127.0.0.1');
    assert.equal(o.group, 'default');
    assert.equal(o.name, undefined);
    assert.equal(o.isolateNetwork, true);
    assert.equal(o.isolateNetworkExplicit, false);
    assert.equal(o.ignoreGlobally, true);
    assert.equal(o.imageVerification, 'warn');
    assert.deepEqual(o.oidc.scopes, ['openid']);
    assert.equal(o.runtime, 'auto');
    assert.equal(o.stdioSessions, 'per-session');
    assert.equal(o.maxSessions, 100);
    assert.equal(o.sessionTtl, undefined);
    assert.equal(o.sessionTtlMs, 2 * 60 * 60 * 1000);
    assert.equal(o.remoteAuth.timeoutMs, 30_000);
    assert.equal(o.remoteAuth.callbackPort, 8666);
    assert.equal(o.otel.samplingRate, 0.1);
    assert.equal(o.otel.tracingEnabled, true);
    assert.equal(o.otel.metricsEnabled, true);
    assert.equal(o.otel.useLegacyAttributes, true);
    assert.deepEqual(o.tools, []);
    assert.deepEqual(o.explicitFlags, []);
  });

  it('takes --runtime from THV_RUNTIME when the flag is absent', () => {
    assert.equal(options({}, { THV_RUNTIME: 'process' }).runtime, 'process');
    assert.equal(options({ runtime: 'docker' }, { THV_RUNTIME: 'process' }).runtime, 'docker');
    rejectsWithEnv({}, { THV_RUNTIME: 'podman' }, 'THV_RUNTIME: expected one of auto, process, docker, got "podman"');
  });

  it('normalises upper-case transports and proxy modes', () => {
    assert.equal(options({ transport: 'STDIO' }).transport, 'stdio');
    assert.equal(options({ transport: 'Streamable-HTTP' }).transport, 'streamable-http');
    assert.equal(options({ proxyMode: 'SSE' }).proxyMode, 'sse');
  });

  it('records explicitly given flags', () => {
    const o = options(cli(['--isolate-network=true', '--otel-endpoint', 'https://otel.example', 'x']).raw);
    assert.equal(o.isolateNetworkExplicit, true);
    assert.deepEqual([...o.explicitFlags].sort(), ['isolate-network', 'otel-endpoint']);
  });

  it('parses values into typed fields', () => {
    const o = options({
      proxyPort: '8080',
      targetPort: 9090,
      host: 'localhost',
      env: ['A=1', 'B=x=y', 'A=2'],
      label: ['team=platform', 'example.com/tier=gold'],
      sessionTtl: '1h30m',
      allowedOrigins: ['HTTP://LocalHost:3000/', 'https://app.example.com', 'https://app.example.com'],
      otelHeaders: ['x-api-key=abc=def'],
      otelEnvVars: ['HOME, USER', 'PATH'],
      otelCustomAttributes: 'region=us-east-1, team=platform',
      otelSamplingRate: '0.25',
      remoteAuthTimeout: '2m30s',
      remoteForwardHeaders: ['X-Tenant= acme '],
      remoteForwardHeadersSecret: ['Authorization=github-token'],
      maxSessions: '5',
    });
    assert.equal(o.proxyPort, 8080);
    assert.equal(o.targetPort, 9090);
    assert.equal(o.host, 'localhost');
    assert.deepEqual(o.env, { A: '2', B: 'x=y' });
    assert.deepEqual(o.labels, { team: 'platform', 'example.com/tier': 'gold' });
    assert.equal(o.sessionTtl, '1h30m0s');
    assert.equal(o.sessionTtlMs, 90 * 60 * 1000);
    assert.deepEqual(o.allowedOrigins, ['http://localhost:3000', 'https://app.example.com']);
    assert.deepEqual(o.otel.headers, { 'x-api-key': 'abc=def' });
    assert.deepEqual(o.otel.envVars, ['HOME', 'USER', 'PATH']);
    assert.deepEqual(o.otel.customAttributes, { region: 'us-east-1', team: 'platform' });
    assert.equal(o.otel.samplingRate, 0.25);
    assert.equal(o.remoteAuth.timeoutMs, 150_000);
    assert.deepEqual(o.remoteForwardHeaders, { 'X-Tenant': ' acme ' });
    assert.deepEqual(o.remoteForwardHeadersSecret, { Authorization: 'github-token' });
    assert.equal(o.maxSessions, 5);
  });

  it('treats --session-ttl 0 as the default', () => {
    const o = options({ sessionTtl: '0' });
    assert.equal(o.sessionTtl, undefined);
    assert.equal(o.sessionTtlMs, 2 * 60 * 60 * 1000);
  });

  it('exports the schema itself', () => {
    const result = RunOptionsSchema.safeParse({ transport: 'sse' });
    assert.equal(result.success, true);
    assert.equal(RunOptionsSchema.safeParse({ transport: 'nope' }).success, false);
  });
});

describe('parseRunOptions errors name the flag and the accepted values', () => {
  it('--transport', () => rejects({ transport: 'foo' }, '--transport: expected one of stdio, sse, streamable-http, got "foo"'));
  it('--transport inspector is not accepted', () => rejects({ transport: 'inspector' }, '--transport: expected one of'));
  it('--proxy-mode', () => rejects({ proxyMode: 'websocket' }, '--proxy-mode: expected one of streamable-http, sse, got "websocket"'));
  it('--host IPv6', () => rejects({ host: '::1' }, '--host: IPv6 addresses are not supported: ::1'));
  it('--host bracketed IPv6', () => rejects({ host: '[::1]' }, '--host: IPv6 addresses are not supported'));
  it('--host garbage', () => rejects({ host: 'not a host!' }, '--host: expected an IPv4 address or a hostname'));
  it('--proxy-port range', () => rejects({ proxyPort: '65536' }, '--proxy-port: expected a port number between 0 and 65535, got "65536"'));
  it('--proxy-port text', () => rejects({ proxyPort: 'http' }, '--proxy-port: expected a port number'));
  it('--target-port negative', () => rejects({ targetPort: '-1' }, '--target-port: expected a port number between 0 and 65535'));
  it('--remote-auth-callback-port range', () =>
    rejects({ remoteAuthCallbackPort: '80' }, '--remote-auth-callback-port: expected a port number between 1024 and 65535'));
  it('--endpoint-prefix', () => rejects({ endpointPrefix: 'mcp' }, '--endpoint-prefix: must start with "/", got "mcp"'));
  it('--session-ttl negative', () => rejects({ sessionTtl: '-5m' }, '--session-ttl: must not be negative, got "-5m"'));
  it('--session-ttl garbage', () => rejects({ sessionTtl: '10' }, '--session-ttl: expected a duration such as 30s, 5m or 1h30m, got "10"'));
  it('--remote-auth-timeout', () => rejects({ remoteAuthTimeout: '0s' }, '--remote-auth-timeout: must be positive'));
  it('--allowed-origins with a path', () =>
    rejects({ allowedOrigins: ['https://a.example/app'] }, '--allowed-origins: expected an origin scheme://host[:port]', '"https://a.example/app"'));
  it('--allowed-origins with credentials', () => rejects({ allowedOrigins: ['https://u:p@a.example'] }, '--allowed-origins:'));
  it('--oidc-issuer must be an http(s) URL', () =>
    rejects({ oidcIssuer: 'ftp://issuer.example' }, '--oidc-issuer: expected an http:// or https:// URL, got "ftp://issuer.example"'));
  it('--resource-url must be a URL', () => rejects({ resourceUrl: 'nope' }, '--resource-url: expected an http:// or https:// URL'));
  it('--token-exchange-url must be a URL', () => rejects({ tokenExchangeUrl: 'x' }, '--token-exchange-url: expected an http:// or https:// URL'));
  it('--remote-auth-issuer must be a URL', () => rejects({ remoteAuthIssuer: 'x' }, '--remote-auth-issuer: expected'));
  it('--oidc-jwks-url must use HTTPS unless local', () => {
    rejects({ oidcJwksUrl: 'http://keys.example.com/jwks' }, '--oidc-jwks-url: endpoint must use HTTPS: http://keys.example.com/jwks');
    assert.doesNotThrow(() => options({ oidcJwksUrl: 'http://localhost:8080/jwks' }));
    assert.doesNotThrow(() => options({ oidcJwksUrl: 'http://keys.example.com/jwks', oidcInsecureAllowHttp: true }));
    assert.doesNotThrow(() => options({ oidcIntrospectionUrl: 'http://idp/introspect' }, { INSECURE_DISABLE_URL_VALIDATION: 'true' }));
    rejects({ oidcIntrospectionUrl: 'http://idp.example/introspect' }, '--oidc-introspection-url: endpoint must use HTTPS');
  });
  it('--remote-auth-resource must be an RFC 8707 URI', () => {
    rejects({ remoteAuthResource: 'https://api.example.com/mcp#frag' }, '--remote-auth-resource: resource URI must not contain fragments');
    rejects({ remoteAuthResource: 'urn:example' }, '--remote-auth-resource: resource URI must include a host');
    assert.equal(options({ remoteAuthResource: 'https://api.example.com/mcp' }).remoteAuth.resource, 'https://api.example.com/mcp');
  });
  it('--image-verification', () => rejects({ imageVerification: 'strict' }, '--image-verification: expected one of warn, enabled, disabled, got "strict"'));
  it('--runtime', () => rejects({ runtime: 'podman' }, '--runtime: expected one of auto, process, docker, got "podman"'));
  it('--stdio-sessions', () => rejects({ stdioSessions: 'single' }, '--stdio-sessions: expected one of per-session, shared, got "single"'));
  it('--max-sessions', () => {
    rejects({ maxSessions: '0' }, '--max-sessions: expected a whole number from 1 to 10000, got "0"');
    rejects({ maxSessions: '10001' }, '--max-sessions: expected a whole number from 1 to 10000');
    rejects({ maxSessions: 'many' }, '--max-sessions: expected a whole number');
  });
  it('--otel-sampling-rate', () => {
    rejects({ otelSamplingRate: '1.5' }, '--otel-sampling-rate: expected a number from 0.0 to 1.0, got "1.5"');
    rejects({ otelSamplingRate: 'half' }, '--otel-sampling-rate: expected a number from 0.0 to 1.0');
  });
  it('--otel-headers', () => rejects({ otelHeaders: ['novalue'] }, '--otel-headers: expected key=value, got "novalue"'));
  it('--otel-custom-attributes', () => rejects({ otelCustomAttributes: 'a=1,b' }, '--otel-custom-attributes: expected key=value pairs separated by commas, got "b"'));
  it('--otel-env-vars', () => rejects({ otelEnvVars: ['OK,1BAD'] }, '--otel-env-vars: invalid environment variable name "1BAD"'));
  it('--otel-endpoint', () => rejects({ otelEndpoint: 'ftp://collector' }, '--otel-endpoint: expected an http:// or https:// URL'));
  it('--env', () => {
    rejects({ env: ['NOVALUE'] }, '--env: expected KEY=VALUE, got "NOVALUE"');
    rejects({ env: ['=value'] }, '--env: expected KEY=VALUE, got "=value"');
  });
  it('--secret', () => rejects({ secret: ['github-token'] }, '--secret: expected NAME,target=ENV_VAR, got "github-token"'));
  it('--publish', () => rejects({ publish: ['80:abc'] }, '--publish: expected hostPort:containerPort or containerPort'));
  it('--volume', () => rejects({ volume: ['/tmp/$(id):/x'] }, '--volume: volume "/tmp/$(id):/x" contains a forbidden character'));
  it('--group', () => {
    rejects({ group: 'My Group' }, '--group: group name must use lowercase letters');
    rejects({ group: 'a  b' }, '--group:');
    rejects({ group: ' a' }, '--group:');
    rejects({ group: '' }, '--group: group name cannot be empty');
    assert.equal(options({ group: 'team a_1-x' }).group, 'team a_1-x');
  });
  it('--tools with an empty name', () => rejects({ tools: [''] }, '--tools: tool names cannot be empty'));
  it('--runtime-add-package', () => rejects({ runtimeAddPackage: ['curl;rm'] }, '--runtime-add-package: invalid package name "curl;rm"'));
  it('--build-with', () => rejects({ buildWith: ["x'y"] }, '--build-with: invalid requirement'));
  it('--token-exchange-subject-token-type', () => {
    rejects({ tokenExchangeSubjectTokenType: 'saml' }, '--token-exchange-subject-token-type: expected one of access_token, id_token, jwt');
    assert.equal(options({ tokenExchangeSubjectTokenType: 'urn:ietf:params:oauth:token-type:id_token' }).tokenExchange.subjectTokenType, 'urn:ietf:params:oauth:token-type:id_token');
  });
  it('--token-exchange-header-name', () => rejects({ tokenExchangeHeaderName: 'X Bad' }, '--token-exchange-header-name: invalid header name'));
  it('--remote-forward-headers', () => {
    rejects({ remoteForwardHeaders: ['Host=evil'] }, '--remote-forward-headers: header "Host" is restricted');
    rejects({ remoteForwardHeaders: ['x-forwarded-for=1.2.3.4'] }, 'is restricted');
    rejects({ remoteForwardHeaders: ['NoEquals'] }, '--remote-forward-headers: invalid header format "NoEquals": expected Name=Value');
    rejects({ remoteForwardHeaders: ['X-A=line\nbreak'] }, '--remote-forward-headers: invalid header value');
  });
  it('--remote-forward-headers-secret', () =>
    rejects({ remoteForwardHeadersSecret: ['X-Key='] }, '--remote-forward-headers-secret: invalid secret header "X-Key=": secret name cannot be empty'));
  it('a list value where one value is expected', () => rejects({ name: ['a', 'b'] }, '--name: expected a single value'));
  it('a non-boolean for a boolean flag', () => rejects({ stateless: 'yes' }, '--stateless: expected true or false, got "yes"'));
});

describe('parseRunOptions cross-flag rules', () => {
  it('--from-config allows only --foreground and --debug', () => {
    assert.doesNotThrow(() => options({ fromConfig: 'exported.json', foreground: true, debug: true }));
    rejects(
      { fromConfig: 'exported.json', name: 'x', transport: 'sse', foreground: true },
      '--from-config cannot be used with other configuration flags: --name, --transport',
    );
  });

  it('--remote-auth-issuer excludes the explicit endpoints', () =>
    rejects(
      { remoteAuthIssuer: 'https://issuer.example', remoteAuthTokenUrl: 'https://issuer.example/token' },
      '--remote-auth-issuer cannot be combined with --remote-auth-authorize-url or --remote-auth-token-url',
    ));

  it('--stateless needs an HTTP transport', () => rejects({ stateless: true, transport: 'stdio' }, '--stateless requires the sse or streamable-http transport'));

  it('lists all problems at once, field and cross-flag alike', () => {
    assert.throws(
      () => parseRunOptions({ transport: 'foo', proxyPort: '99999', endpointPrefix: 'x', fromConfig: 'c.json', name: 'n' }, {}),
      (err: unknown) => {
        assert.ok(err instanceof ThvError);
        const lines = err.message.split('\n');
        assert.equal(lines[0], '4 problems with the flags:');
        assert.ok(lines.some((l) => l.includes('--transport: expected one of')));
        assert.ok(lines.some((l) => l.includes('--proxy-port: expected a port number')));
        assert.ok(lines.some((l) => l.includes('--endpoint-prefix: must start with "/"')));
        assert.ok(lines.some((l) => l.includes('--from-config cannot be used with other configuration flags')));
        return true;
      },
    );
  });

  it('rejects input that is not an object', () => rejects(['--transport'] as unknown as Record<string, unknown>, 'run options must be an object'));
});

describe('parseRunOptions warnings', () => {
  it('warns that --proxy-mode sse is deprecated instead of logging', () => {
    const { warnings } = parseRunOptions({ proxyMode: 'sse' }, {});
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] as string, /'sse' proxy mode is deprecated/);
    assert.deepEqual(parseRunOptions({ proxyMode: 'streamable-http' }, {}).warnings, []);
  });

  it('skips invalid labels with a warning', () => {
    const { options: o, warnings } = parseRunOptions({ label: ['ok=1', 'bad key=1', 'novalue', 'x=' + 'v'.repeat(64)] }, {});
    assert.deepEqual(o.labels, { ok: '1' });
    assert.equal(warnings.length, 3);
    assert.ok(warnings.every((w) => w.startsWith('Skipping invalid label')));
  });

  it('warns about token-exchange flags without --token-exchange-url', () => {
    const { warnings } = parseRunOptions({ tokenExchangeClientId: 'id', tokenExchangeAudience: 'aud' }, {});
    assert.deepEqual(warnings, ['--token-exchange-client-id, --token-exchange-audience have no effect without --token-exchange-url']);
  });

  it('warns when both a secret and its file are given', () => {
    const { warnings } = parseRunOptions({ remoteAuthBearerToken: 't', remoteAuthBearerTokenFile: '/f' }, {});
    assert.deepEqual(warnings, ['--remote-auth-bearer-token is used; --remote-auth-bearer-token-file is ignored']);
  });
});

describe('Go durations', () => {
  it('parses like time.ParseDuration', () => {
    assert.equal(parseDuration('30m'), 30 * 60 * 1000);
    assert.equal(parseDuration('2h'), 2 * 60 * 60 * 1000);
    assert.equal(parseDuration('1h30m'), 90 * 60 * 1000);
    assert.equal(parseDuration('1.5s'), 1500);
    assert.equal(parseDuration('300ms'), 300);
    assert.equal(parseDuration('1m30.5s'), 90_500);
    assert.equal(parseDuration('-5s'), -5000);
    assert.equal(parseDuration('+5s'), 5000);
    assert.equal(parseDuration('0'), 0);
    assert.equal(parseDurationNs('1µs'), 1000n);
    assert.equal(parseDurationNs('1us'), 1000n);
    assert.equal(parseDurationNs('7ns'), 7n);
  });

  it('rejects what Go rejects', () => {
    assert.throws(() => parseDuration(''), /invalid duration/);
    assert.throws(() => parseDuration('10'), /missing unit in duration "10"/);
    assert.throws(() => parseDuration('1d'), /unknown unit "d" in duration "1d"/);
    assert.throws(() => parseDuration('h'), /invalid duration/);
    assert.throws(() => parseDuration('1h 30m'), /unknown unit/);
  });

  it('formats like time.Duration.String', () => {
    assert.equal(formatDuration(2 * 60 * 60 * 1000), '2h0m0s');
    assert.equal(formatDuration(30 * 60 * 1000), '30m0s');
    assert.equal(formatDuration(90_000), '1m30s');
    assert.equal(formatDuration(1500), '1.5s');
    assert.equal(formatDuration(250), '250ms');
    assert.equal(formatDuration(0.5), '500µs');
    assert.equal(formatDuration(0), '0s');
    assert.equal(formatDuration(-90_000), '-1m30s');
    assert.equal(formatDurationNs(1n), '1ns');
    assert.equal(formatDurationNs(3_601_000_000_000n), '1h0m1s');
  });

  it('round-trips', () => {
    for (const s of ['30m0s', '2h0m0s', '1h30m0s', '45s', '1.25s']) assert.equal(formatDuration(parseDuration(s)), s);
  });
});

describe('resolveHostToIPv4', () => {
  it('returns IPv4 literals unchanged', async () => {
    assert.equal(await resolveHostToIPv4('0.0.0.0'), '0.0.0.0');
  });

  it('resolves localhost to an IPv4 address', async () => {
    assert.match(await resolveHostToIPv4('localhost'), /^\d+\.\d+\.\d+\.\d+$/);
  });

  it('rejects IPv6 literals', async () => {
    await assert.rejects(resolveHostToIPv4('::1'), (err: unknown) => err instanceof ThvError && err.message.includes('IPv6 addresses are not supported'));
  });
});
