/** Configuration validation with the reference's messages, defaults and environment overrides. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/registry-server/config.js';
import { formatGoDuration, parseGoDuration } from '../../src/registry-server/duration.js';
import { makePublicPathMatcher } from '../../src/registry-server/api/public-paths.js';
import { resolveRoles, wwwAuthenticate } from '../../src/registry-server/api/auth.js';
import { claimsContain, claimsVisible, gateVisible } from '../../src/registry-server/claims.js';
import { compareVersions } from '../../src/registry-server/semver.js';
import { serverNameProblem } from '../../src/registry-server/api/params.js';

const base = 'registries: [{name: r, sources: [a]}]\nauth: {mode: anonymous}\n';

function error(yaml: string, env: NodeJS.ProcessEnv = {}): string {
  try {
    parseConfig(yaml, env);
  } catch (err) {
    return (err as Error).message;
  }
  return '(no error)';
}

describe('registry server configuration', () => {
  it('rejects with the reference messages', () => {
    const cases: Array<[string, string]> = [
      ['sources: []\n', 'invalid configuration: at least one source must be configured'],
      ['sources: [{managed: {}}]\n', 'invalid configuration: source[0]: name is required'],
      ['sources: [{name: Bad_Name, managed: {}}]\n', "invalid configuration: source[0]: name 'Bad_Name' must be a valid DNS subdomain (lowercase alphanumeric and hyphens, max 63 chars)"],
      ['sources: [{name: a, managed: {}}, {name: a, managed: {}}]\n', "invalid configuration: source[1]: duplicate source name 'a'"],
      ['sources: [{name: a}]\n', 'invalid configuration: source[0] (a): one of git, api, file, managed, or kubernetes configuration must be specified'],
      ['sources: [{name: a, managed: {}, file: {path: x}}]\n', 'invalid configuration: source[0] (a): only one of git, api, file, managed, or kubernetes configuration may be specified'],
      ['sources: [{name: a, git: {branch: x}, syncPolicy: {interval: 1m}}]\n', 'invalid configuration: source[0] (a): git.repository is required'],
      ['sources: [{name: a, git: {repository: x, branch: b, tag: t}, syncPolicy: {interval: 1m}}]\n', 'invalid configuration: source[0] (a): git.branch, git.tag, and git.commit are mutually exclusive'],
      ['sources: [{name: a, git: {repository: x, auth: {username: u}}, syncPolicy: {interval: 1m}}]\n', 'invalid configuration: source[0] (a): git.auth.username and git.auth.passwordFile must both be specified'],
      ['sources: [{name: a, git: {repository: x, auth: {username: u, passwordFile: rel}}, syncPolicy: {interval: 1m}}]\n', 'invalid configuration: source[0] (a): git.auth.passwordFile must be an absolute path'],
      ['sources: [{name: a, api: {}, syncPolicy: {interval: 1m}}]\n', 'invalid configuration: source[0] (a): api.endpoint is required'],
      ['sources: [{name: a, api: {endpoint: "http://x", timeout: 10m}, syncPolicy: {interval: 1m}}]\n', 'invalid configuration: source[0] (a): api.timeout must not exceed 5m0s'],
      ['sources: [{name: a, api: {endpoint: "http://x", timeout: abc}, syncPolicy: {interval: 1m}}]\n', `invalid configuration: source[0] (a): api.timeout must be a valid duration (e.g., '30s', '1m'): time: invalid duration "abc"`],
      ['sources: [{name: a, file: {}, syncPolicy: {interval: 1m}}]\n', 'invalid configuration: source[0] (a): file.path or file.url is required'],
      ['sources: [{name: a, file: {path: x, url: "http://y"}, syncPolicy: {interval: 1m}}]\n', 'invalid configuration: source[0] (a): file.path and file.url are mutually exclusive'],
      ['sources: [{name: a, file: {url: "ftp://y/z"}, syncPolicy: {interval: 1m}}]\n', 'invalid configuration: source[0] (a): file.url must use http or https scheme'],
      ['sources: [{name: a, file: {path: x}}]\n', 'invalid configuration: source[0] (a): syncPolicy.interval is required'],
      ['sources: [{name: a, file: {path: x}, syncPolicy: {interval: soon}}]\n', `invalid configuration: source[0] (a): syncPolicy.interval must be a valid duration (e.g., '30m', '1h'): time: invalid duration "soon"`],
      ['sources: [{name: a, managed: {}}, {name: b, managed: {}}]\n', 'invalid configuration: at most one managed source is allowed, found 2'],
      ['sources: [{name: a, managed: {}, claims: {org: [1]}}]\n', 'invalid configuration: source[0] (a): claim "org": array element [0] must be a string, got int'],
    ];
    for (const [yaml, message] of cases) assert.equal(error(yaml + base), message, yaml);
    const src = 'sources: [{name: a, managed: {}}]\n';
    assert.equal(error(src), 'invalid configuration: at least one registry must be configured');
    assert.equal(error(`${src}registries: [{sources: [a]}]\n`), 'invalid configuration: registries[0]: name is required');
    assert.equal(error(`${src}registries: [{name: r, sources: [a]}, {name: r, sources: [a]}]\n`), "invalid configuration: registries[1]: duplicate registry name 'r'");
    assert.equal(error(`${src}registries: [{name: r}]\n`), 'invalid configuration: registries[0] (r): at least one source is required');
    assert.equal(error(`${src}registries: [{name: r, sources: [b]}]\n`), "invalid configuration: registries[0] (r): references unknown source 'b'");
    const reg = `${src}registries: [{name: r, sources: [a]}]\n`;
    assert.equal(error(`${reg}auth: {mode: x}\n`), "invalid configuration: invalid auth configuration: invalid auth.mode: x (must be 'anonymous' or 'oauth')");
    assert.equal(error(reg), 'invalid configuration: invalid auth configuration: auth.oauth is required when mode is oauth');
    assert.equal(error(`${reg}auth: {oauth: {}}\n`), 'invalid configuration: invalid auth configuration: auth.oauth.providers is required when mode is oauth');
    assert.equal(error(`${reg}auth: {oauth: {providers: [{issuerUrl: "https://x"}]}}\n`), 'invalid configuration: invalid auth configuration: auth.oauth.providers[0].name is required');
    assert.equal(error(`${reg}auth: {oauth: {providers: [{name: p, issuerUrl: "https://x"}]}}\n`), 'invalid configuration: invalid auth configuration: auth.oauth.providers[0].audience is required');
    assert.equal(
      error(`${reg}auth: {oauth: {providers: [{name: p, issuerUrl: "http://idp.example", audience: a}]}}\n`),
      'invalid configuration: invalid auth configuration: auth.oauth.providers[0].issuerUrl must use HTTPS (set THV_REGISTRY_INSECURE_URL=true to allow HTTP)',
    );
    assert.equal(error(`${reg}auth: {mode: anonymous}\ndatabase: {host: h, port: 5432, user: u}\n`), 'invalid configuration: database.database is required');
    assert.equal(error(`${reg}auth: {mode: anonymous}\ndatabase: {port: 5432}\n`), 'invalid configuration: database.host is required');
    assert.equal(error(`${reg}auth: {mode: anonymous}\ndatabase: {host: h, port: 1, user: u, database: d, maxMetaSize: -1}\n`), 'invalid configuration: database.maxMetaSize must be greater than zero');
  });

  it('defaults: oauth mode, realm, PGlite when database is absent; keys are case-insensitive', () => {
    const c = parseConfig(
      'Sources: [{Name: a, File: {Path: x}, SyncPolicy: {Interval: 30m}, claims: {Org: acme}}]\nregistries: [{name: r, sources: [a]}]\nauth:\n  oauth:\n    providers: [{name: p, issuerUrl: "http://127.0.0.1:1", audience: a}]\n',
      { HOME: '/home/u' },
    );
    assert.equal(c.auth.mode, 'oauth');
    assert.equal(c.auth.oauth?.realm, 'mcp-registry');
    assert.equal(c.database.kind, 'pglite');
    assert.equal(c.database.kind === 'pglite' && c.database.dataDir, '/home/u/.local/share/toolhive/registry-server/db');
    assert.equal(c.sources[0]!.intervalMs, 30 * 60_000);
    assert.deepEqual(c.sources[0]!.claims, { Org: 'acme' }, 'claim names keep their case');
  });

  it('THV_REGISTRY_* overrides keys', () => {
    const yaml = 'sources: [{name: a, managed: {}}]\nregistries: [{name: r, sources: [a]}]\nauth: {mode: oauth}\ndatabase: {host: h, port: 5432, user: u, database: d}\n';
    const c = parseConfig(yaml, { THV_REGISTRY_AUTH_MODE: 'anonymous', THV_REGISTRY_DATABASE_HOST: 'db.internal', THV_REGISTRY_DATABASE_PASSWORD: 'pw', THV_REGISTRY_DATABASE_PORT: '6543' });
    assert.equal(c.auth.mode, 'anonymous');
    assert.ok(c.database.kind === 'postgres');
    assert.equal(c.database.host, 'db.internal');
    assert.equal(c.database.port, 6543);
    assert.equal(c.database.password, 'pw');
    assert.equal(c.database.sslMode, 'require');
  });

  it('telemetry block: defaults, sampling checked only when tracing is on', () => {
    const reg = 'sources: [{name: a, managed: {}}]\nregistries: [{name: r, sources: [a]}]\nauth: {mode: anonymous}\n';
    assert.equal(parseConfig(reg, {}).telemetry, undefined);
    const t = parseConfig(`${reg}telemetry: {enabled: true, metrics: {enabled: true}}\n`, {}).telemetry;
    assert.deepEqual(t, {
      enabled: true,
      serviceName: 'thv-registry-api',
      serviceVersion: 'unknown',
      endpoint: 'localhost:4318',
      insecure: false,
      tracing: { enabled: false, sampling: 0.05 },
      metrics: { enabled: true },
    });
    assert.equal(
      error(`${reg}telemetry: {enabled: true, tracing: {enabled: true, sampling: 0}}\n`),
      'invalid configuration: telemetry: tracing: sampling must be greater than 0.0 and at most 1.0, got 0 (use enabled: false to disable tracing)',
    );
    assert.equal(parseConfig(`${reg}telemetry: {enabled: false, tracing: {enabled: true, sampling: 7}}\n`, {}).telemetry?.enabled, false);
    // Keys present in the file can be switched from the environment.
    assert.equal(parseConfig(`${reg}telemetry: {enabled: false}\n`, { THV_REGISTRY_TELEMETRY_ENABLED: 'true' }).telemetry?.enabled, true);
  });

  it('publicPaths: under auth (the reference) or auth.oauth (the issue), both kept', () => {
    const c = parseConfig(
      'sources: [{name: a, managed: {}}]\nregistries: [{name: r, sources: [a]}]\nauth:\n  publicPaths: [/docs]\n  oauth:\n    publicPaths: [/registry/r/v0.1]\n    providers: [{name: p, issuerUrl: "https://idp.example", audience: a}]\n',
      {},
    );
    assert.deepEqual(c.auth.publicPaths, ['/docs', '/registry/r/v0.1']);
    assert.equal(
      error('sources: [{name: a, managed: {}}]\nregistries: [{name: r, sources: [a]}]\nauth: {mode: anonymous, oauth: {publicPaths: [docs]}}\n'),
      "invalid configuration: invalid auth configuration: auth.publicPaths entry 'docs' must start with '/'",
    );
  });

  it('Go durations', () => {
    assert.equal(parseGoDuration('1h30m'), 5_400_000);
    assert.equal(parseGoDuration('1.5s'), 1500);
    assert.equal(parseGoDuration('soon'), undefined);
    assert.equal(formatGoDuration(30 * 60_000), '30m0s');
    assert.equal(formatGoDuration(3_600_000), '1h0m0s');
  });
});

describe('public paths, roles, claims, versions, names', () => {
  it('matches whole segments after normalisation and refuses encoded traversal', () => {
    const pub = makePublicPathMatcher(['/health', '/docs', '/swagger']);
    for (const p of ['/health', '/docs/api/v1', '/health/', '//health', '/./docs/api', '/docs/v1/../v2', '/openapi.json', '/.well-known/x']) assert.ok(pub(p), p);
    for (const p of ['/healthcheck', '/swaggerui', '/Health', '/health/../v0/servers', '//health/..//api', '/swagger/..%2f..%2fv0/servers', '/docs/%2e%2e/v1', '/docs%2F..%2Fv1', '/docs/%252e', '/docs/%ZZ'])
      assert.ok(!pub(p), p);
  });

  it('WWW-Authenticate is sanitised', () => {
    assert.equal(
      wwwAuthenticate('r"x\r\n', 'https://reg/', 'invalid_token', 'token validation failed'),
      'Bearer realm="r\\"x", error="invalid_token", error_description="token validation failed", resource_metadata="https://reg/.well-known/oauth-protected-resource"',
    );
    assert.equal(wwwAuthenticate('r', '', 'e', 'd'), 'Bearer realm="r", error="e", error_description="d"');
  });

  it('roles: OR across maps, AND across keys, OR within values', () => {
    const rules = { superAdmin: [{ role: 'root' }], manageSources: [{ org: 'acme', team: ['a', 'b'] }, { role: 'ops' }], manageEntries: [{}] };
    assert.deepEqual(resolveRoles(rules, { org: 'acme', team: ['b', 'z'] }), ['manageSources']);
    assert.deepEqual(resolveRoles(rules, { org: 'acme' }), []);
    assert.deepEqual(resolveRoles(rules, { role: ['ops', 'root'] }), ['superAdmin', 'manageSources']);
  });

  it('claims: visibility is OR, containment is AND, unlabelled is denied', () => {
    assert.ok(claimsVisible({ team: ['a', 'x'] }, { team: ['a', 'b'] }));
    assert.ok(!claimsContain({ team: ['a', 'x'] }, { team: ['a', 'b'] }));
    assert.ok(claimsContain({ team: ['a', 'b', 'c'] }, { team: ['a', 'b'] }));
    assert.ok(!gateVisible({ claims: { team: 'a' }, superAdmin: false }, null));
    assert.ok(gateVisible({ claims: { team: 'a' }, superAdmin: true }, null));
    assert.ok(gateVisible({ superAdmin: false }, { team: 'z' }));
  });

  it('versions and names', () => {
    assert.ok(compareVersions('1.10.0', '1.9.0') > 0);
    assert.ok(compareVersions('v2', '1.9.9') > 0);
    assert.ok(compareVersions('1.0.0', '1.0.0-rc.1') > 0);
    assert.ok(compareVersions('b', 'a') > 0);
    assert.equal(serverNameProblem('io.x/y'), undefined);
    assert.match(serverNameProblem('noslash')!, /dns-namespace\/name/);
    assert.match(serverNameProblem('a/b/c')!, /exactly one/);
  });
});
