import { readFileSync, realpathSync, statSync } from 'node:fs';
import { join, resolve, dirname, isAbsolute } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ErrorCodes, ThvError } from '../errors.js';
import { toolhiveDir } from '../secrets/xdg.js';
import { claimValueError, type Claims } from './claims.js';
import { parseGoDuration } from './duration.js';
import { validFilterPatterns, type FilterConfig } from './sources/filter.js';

/**
 * The registry server's configuration file (spec §2), validated with the reference's messages. Keys
 * match case-insensitively as viper does, except inside claim maps (claim names are case-sensitive).
 * Differences on purpose: `auth.mode` defaults to `oauth` when absent (the reference fails), and
 * `database` may be absent or name a directory: then the embedded PGlite store is used.
 */
export type SourceType = 'git' | 'api' | 'file' | 'managed' | 'kubernetes';

export interface GitSourceConfig {
  repository: string;
  branch?: string;
  tag?: string;
  commit?: string;
  path: string;
  auth?: { username: string; passwordFile: string };
}
export interface ApiSourceConfig {
  endpoint: string;
  timeout?: string;
}
export interface FileSourceConfig {
  path?: string;
  url?: string;
  timeout?: string;
}

export interface SourceConfig {
  name: string;
  type: SourceType;
  git?: GitSourceConfig;
  api?: ApiSourceConfig;
  file?: FileSourceConfig;
  managed?: Record<string, never>;
  kubernetes?: { namespaces?: string[] };
  intervalMs?: number;
  filter?: FilterConfig;
  claims?: Claims;
}

export interface RegistryConfig {
  name: string;
  sources: string[];
  claims?: Claims;
}

export type DatabaseConfig =
  | { kind: 'pglite'; dataDir: string; maxMetaSize: number }
  | {
      kind: 'postgres';
      host: string;
      port: number;
      user: string;
      database: string;
      migrationUser: string;
      password?: string;
      migrationPassword?: string;
      sslMode: string;
      maxOpenConns?: number;
      maxIdleConns?: number;
      connMaxLifetimeMs?: number;
      maxMetaSize: number;
    };

export interface ProviderConfig {
  name: string;
  issuerUrl: string;
  audience: string;
  jwksUrl?: string;
  clientId?: string;
  clientSecretFile?: string;
  caCertPath?: string;
  authTokenFile?: string;
  introspectionUrl?: string;
  allowPrivateIP?: boolean;
}

export type RoleName = 'superAdmin' | 'manageSources' | 'manageRegistries' | 'manageEntries';
export const ROLE_NAMES: readonly RoleName[] = ['superAdmin', 'manageSources', 'manageRegistries', 'manageEntries'];
export type RoleRules = Partial<Record<RoleName, Array<Record<string, unknown>>>>;

export interface AuthConfig {
  mode: 'oauth' | 'anonymous';
  publicPaths: string[];
  oauth?: { resourceUrl: string; realm: string; providers: ProviderConfig[] };
  authz?: { roles: RoleRules };
}

export interface RegistryServerConfig {
  sources: SourceConfig[];
  registries: RegistryConfig[];
  database: DatabaseConfig;
  auth: AuthConfig;
  /** Absent, or `enabled: false`: no telemetry at all. */
  telemetry?: TelemetryConfig;
  /** Allows http:// issuers (THV_REGISTRY_INSECURE_URL). */
  insecureUrl: boolean;
}

/** The `telemetry` block (spec §2.6), defaults applied. */
export interface TelemetryConfig {
  enabled: boolean;
  serviceName: string;
  serviceVersion: string;
  /** OTLP/HTTP `host:port[/path]` or a URL; `/v1/traces` and `/v1/metrics` are appended. */
  endpoint: string;
  insecure: boolean;
  tracing: { enabled: boolean; sampling: number };
  /** Metrics go to the OTLP endpoint and are served as Prometheus text at `/metrics` (internal server). */
  metrics: { enabled: boolean };
}

export const DEFAULT_MAX_META_SIZE = 262_144;
const SOURCE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

function fail(message: string): never {
  throw new ThvError(ErrorCodes.InvalidConfig, `invalid configuration: ${message}`);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Lower-cases keys (viper matches case-insensitively), leaving claim maps as written. */
function normalizeKeys(v: unknown, keepCase = false): unknown {
  if (Array.isArray(v)) return v.map((x) => normalizeKeys(x, keepCase));
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const [k, val] of Object.entries(v)) {
    const key = keepCase ? k : k.toLowerCase();
    // Claim maps and role rules keep their keys and everything beneath them.
    const inner = key === 'claims' || key === 'roles' ? 'claims' : undefined;
    out[key] = inner ? keepClaims(val, key) : normalizeKeys(val, keepCase);
  }
  return out;
}

function keepClaims(v: unknown, key: string): unknown {
  if (key === 'roles' && isObj(v)) {
    // role names match case-insensitively, the claim maps under them do not
    const out: Obj = {};
    for (const [k, val] of Object.entries(v)) out[k.toLowerCase()] = val;
    return out;
  }
  return v;
}

/** THV_REGISTRY_<PATH> overrides keys present in the file (viper's AutomaticEnv), plus a few known ones. */
function applyEnv(root: Obj, env: NodeJS.ProcessEnv): void {
  const known = [
    ['auth', 'mode'],
    ['auth', 'oauth', 'realm'],
    ['auth', 'oauth', 'resourceurl'],
    ['database', 'password'],
    ['database', 'migrationpassword'],
    ['database', 'maxmetasize'],
  ];
  const paths: string[][] = [];
  const walk = (o: Obj, prefix: string[]) => {
    for (const [k, v] of Object.entries(o)) {
      if (k === 'claims' || k === 'roles') continue;
      if (isObj(v)) walk(v, [...prefix, k]);
      else if (!Array.isArray(v)) paths.push([...prefix, k]);
    }
  };
  walk(root, []);
  for (const p of known) if (!paths.some((q) => q.join('.') === p.join('.'))) paths.push(p);
  for (const p of paths) {
    const value = env[`THV_REGISTRY_${p.join('_').toUpperCase()}`];
    if (value === undefined) continue;
    let o: Obj = root;
    for (const seg of p.slice(0, -1)) {
      if (!isObj(o[seg])) {
        // only the pre-registered keys may create their parents
        o[seg] = {};
      }
      o = o[seg] as Obj;
    }
    const last = p[p.length - 1]!;
    const old = o[last];
    o[last] = typeof old === 'number' ? Number(value) : typeof old === 'boolean' ? /^(1|true)$/i.test(value) : value;
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

function durationOf(v: unknown): string | undefined {
  return typeof v === 'number' ? `${v}ns` : str(v);
}

function claimsOf(v: unknown, prefix: string): Claims | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) fail(`${prefix}claims must be a map`);
  const err = claimValueError(v);
  if (err) fail(`${prefix}${err}`);
  return v as Claims;
}

function filterOf(v: unknown, prefix: string): FilterConfig | undefined {
  if (!isObj(v)) return undefined;
  const list = (x: unknown, what: string): string[] | undefined => {
    if (x === undefined || x === null) return undefined;
    if (!Array.isArray(x) || !x.every((s) => typeof s === 'string')) fail(`${prefix}filter.${what} must be a list of strings`);
    return x as string[];
  };
  const names = isObj(v.names) ? { include: list(v.names.include, 'names.include'), exclude: list(v.names.exclude, 'names.exclude') } : undefined;
  const tags = isObj(v.tags) ? { include: list(v.tags.include, 'tags.include'), exclude: list(v.tags.exclude, 'tags.exclude') } : undefined;
  const f: FilterConfig = { names, tags };
  const bad = validFilterPatterns(f);
  if (bad) fail(`${prefix}filter: invalid name pattern '${bad}'`);
  return f;
}

function timeoutOf(v: unknown, what: string, prefix: string, max?: number): string | undefined {
  const t = durationOf(v);
  if (t === undefined || t === '') return undefined;
  const ms = parseGoDuration(t);
  if (ms === undefined) fail(`${prefix}${what} must be a valid duration (e.g., '30s', '1m'): time: invalid duration "${t}"`);
  if (ms <= 0) fail(`${prefix}${what} must be greater than zero`);
  if (max !== undefined && ms > max) fail(`${prefix}${what} must not exceed 5m0s`);
  return t;
}

function sourceOf(raw: unknown, i: number, seen: Set<string>): SourceConfig {
  if (!isObj(raw)) fail(`source[${i}]: must be a map`);
  const name = str(raw.name) ?? '';
  if (name === '') fail(`source[${i}]: name is required`);
  if (!SOURCE_NAME.test(name)) fail(`source[${i}]: name '${name}' must be a valid DNS subdomain (lowercase alphanumeric and hyphens, max 63 chars)`);
  if (seen.has(name)) fail(`source[${i}]: duplicate source name '${name}'`);
  seen.add(name);
  const p = `source[${i}] (${name}): `;
  const types = (['git', 'api', 'file', 'managed', 'kubernetes'] as const).filter((t) => raw[t] !== undefined && raw[t] !== null);
  if (types.length === 0) fail(`${p}one of git, api, file, managed, or kubernetes configuration must be specified`);
  if (types.length > 1) fail(`${p}only one of git, api, file, managed, or kubernetes configuration may be specified`);
  const type = types[0]!;
  const block = isObj(raw[type]) ? (raw[type] as Obj) : {};
  const src: SourceConfig = { name, type, claims: claimsOf(raw.claims, p) };
  if (type === 'git') {
    const repository = str(block.repository) ?? '';
    if (repository === '') fail(`${p}git.repository is required`);
    const refs = (['branch', 'tag', 'commit'] as const).filter((k) => (str(block[k]) ?? '') !== '');
    if (refs.length > 1) fail(`${p}git.branch, git.tag, and git.commit are mutually exclusive`);
    const git: GitSourceConfig = { repository, path: str(block.path) || 'registry.json' };
    for (const r of refs) git[r] = str(block[r]);
    if (isObj(block.auth)) {
      const username = str(block.auth.username) ?? '';
      const passwordFile = str(block.auth.passwordfile) ?? '';
      if ((username === '') !== (passwordFile === '')) fail(`${p}git.auth.username and git.auth.passwordFile must both be specified`);
      if (passwordFile !== '') {
        if (!isAbsolute(passwordFile)) fail(`${p}git.auth.passwordFile must be an absolute path`);
        try {
          statSync(passwordFile);
        } catch (err) {
          fail(`${p}git.auth.passwordFile is not accessible: ${(err as Error).message}`);
        }
        git.auth = { username, passwordFile };
      }
    }
    src.git = git;
  } else if (type === 'api') {
    const endpoint = str(block.endpoint) ?? '';
    if (endpoint === '') fail(`${p}api.endpoint is required`);
    let u: URL;
    try {
      u = new URL(endpoint);
    } catch {
      fail(`${p}api.endpoint must be an absolute URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') fail(`${p}api.endpoint must use http or https scheme`);
    src.api = { endpoint, timeout: timeoutOf(block.timeout, 'api.timeout', p, 300_000) };
  } else if (type === 'file') {
    const path = str(block.path) ?? '';
    const url = str(block.url) ?? '';
    if (path === '' && url === '') fail(`${p}file.path or file.url is required`);
    if (path !== '' && url !== '') fail(`${p}file.path and file.url are mutually exclusive`);
    if (url !== '') {
      let u: URL | undefined;
      try {
        u = new URL(url);
      } catch {
        u = undefined;
      }
      if (!u || !u.host) fail(`${p}file.url must be an absolute URL with host`);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') fail(`${p}file.url must use http or https scheme`);
    }
    src.file = { ...(path ? { path } : {}), ...(url ? { url } : {}), timeout: timeoutOf(block.timeout, 'file.timeout', p) };
  } else if (type === 'managed') {
    src.managed = {};
  } else {
    const ns = block.namespaces;
    src.kubernetes = Array.isArray(ns) ? { namespaces: ns.map(String) } : {};
  }
  if (type === 'git' || type === 'api' || type === 'file') {
    const sp = isObj(raw.syncpolicy) ? raw.syncpolicy : {};
    const interval = durationOf(sp.interval) ?? '';
    if (interval === '') fail(`${p}syncPolicy.interval is required`);
    const ms = parseGoDuration(interval);
    if (ms === undefined) fail(`${p}syncPolicy.interval must be a valid duration (e.g., '30m', '1h'): time: invalid duration "${interval}"`);
    if (ms <= 0) fail(`${p}syncPolicy.interval must be greater than zero`);
    src.intervalMs = ms;
    src.filter = filterOf(raw.filter, p);
  }
  return src;
}

function databaseOf(raw: unknown, env: NodeJS.ProcessEnv): DatabaseConfig {
  const defaultDir = join(toolhiveDir('data', env), 'registry-server', 'db');
  if (raw === undefined || raw === null) return { kind: 'pglite', dataDir: defaultDir, maxMetaSize: DEFAULT_MAX_META_SIZE };
  if (typeof raw === 'string') {
    if (raw.trim() === '') fail('database must name a directory or be a map');
    return { kind: 'pglite', dataDir: raw.startsWith('memory://') ? raw : resolve(raw), maxMetaSize: DEFAULT_MAX_META_SIZE };
  }
  if (!isObj(raw)) fail('database must name a directory or be a map');
  const maxMetaSize = raw.maxmetasize === undefined ? DEFAULT_MAX_META_SIZE : Number(raw.maxmetasize);
  if (!Number.isFinite(maxMetaSize) || maxMetaSize <= 0) fail('database.maxMetaSize must be greater than zero');
  const dir = str(raw.path) ?? str(raw.datadir);
  if (dir !== undefined && raw.host === undefined) {
    return { kind: 'pglite', dataDir: dir.startsWith('memory://') ? dir : resolve(dir), maxMetaSize };
  }
  const host = str(raw.host) ?? '';
  if (host === '') fail('database.host is required');
  const port = Number(raw.port ?? 0);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) fail('database.port is required');
  const user = str(raw.user) ?? '';
  if (user === '') fail('database.user is required');
  const database = str(raw.database) ?? '';
  if (database === '') fail('database.database is required');
  const password = str(raw.password) || undefined;
  const migrationUser = str(raw.migrationuser) || user;
  const migrationPassword = str(raw.migrationpassword) || (migrationUser === user ? password : undefined);
  if (isObj(raw.dynamicauth) && (password || str(raw.migrationpassword)))
    fail('database.password and database.dynamicAuth are mutually exclusive; use one authentication method');
  if (isObj(raw.dynamicauth)) fail('database.dynamicAuth (AWS RDS IAM) is not supported by thv');
  const sslMode = str(raw.sslmode) || 'require';
  if (!['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'].includes(sslMode)) fail(`database.sslMode '${sslMode}' is invalid`);
  let connMaxLifetimeMs: number | undefined;
  if (raw.connmaxlifetime !== undefined) {
    connMaxLifetimeMs = parseGoDuration(durationOf(raw.connmaxlifetime) ?? '');
    if (connMaxLifetimeMs === undefined) fail('database.connMaxLifetime must be a valid duration');
  }
  const num = (v: unknown, what: string): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) fail(`database.${what} must be a non-negative integer`);
    return n;
  };
  return {
    kind: 'postgres',
    host,
    port,
    user,
    database,
    migrationUser,
    password,
    migrationPassword,
    sslMode,
    maxOpenConns: num(raw.maxopenconns, 'maxOpenConns'),
    maxIdleConns: num(raw.maxidleconns, 'maxIdleConns'),
    connMaxLifetimeMs,
    maxMetaSize,
  };
}

const bool = (v: unknown): boolean => v === true || (typeof v === 'string' && /^(1|true)$/i.test(v));

function telemetryOf(raw: unknown): TelemetryConfig | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObj(raw)) fail('telemetry must be a map');
  const tracing = isObj(raw.tracing) ? raw.tracing : {};
  const metrics = isObj(raw.metrics) ? raw.metrics : {};
  const enabled = bool(raw.enabled);
  let sampling = 0.05;
  if (tracing.sampling !== undefined && tracing.sampling !== null) {
    sampling = Number(tracing.sampling);
    // Validated only when it would be used, as the reference does.
    if (enabled && bool(tracing.enabled) && !(Number.isFinite(sampling) && sampling > 0 && sampling <= 1))
      fail(`telemetry: tracing: sampling must be greater than 0.0 and at most 1.0, got ${String(tracing.sampling)} (use enabled: false to disable tracing)`);
  }
  return {
    enabled,
    serviceName: str(raw.servicename) || 'thv-registry-api',
    serviceVersion: str(raw.serviceversion) || 'unknown',
    endpoint: str(raw.endpoint) || 'localhost:4318',
    insecure: bool(raw.insecure),
    tracing: { enabled: bool(tracing.enabled), sampling },
    metrics: { enabled: bool(metrics.enabled) },
  };
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function authOf(raw: unknown, insecureUrl: boolean): AuthConfig {
  const a = isObj(raw) ? raw : {};
  const mode = (str(a.mode) ?? '').trim() || 'oauth';
  if (mode !== 'oauth' && mode !== 'anonymous')
    fail(`invalid auth configuration: invalid auth.mode: ${mode} (must be 'anonymous' or 'oauth')`);
  const o = isObj(a.oauth) ? a.oauth : undefined;
  // The reference reads `auth.publicPaths`; the issue places it under `auth.oauth`: both are accepted.
  const publicPaths = [...(Array.isArray(a.publicpaths) ? a.publicpaths : []), ...(Array.isArray(o?.publicpaths) ? o.publicpaths : [])].map(String);
  for (const pp of publicPaths) if (!pp.startsWith('/')) fail(`invalid auth configuration: auth.publicPaths entry '${pp}' must start with '/'`);
  const auth: AuthConfig = { mode, publicPaths };
  if (mode === 'oauth') {
    if (!o) fail('invalid auth configuration: auth.oauth is required when mode is oauth');
    const list = Array.isArray(o.providers) ? o.providers : [];
    if (list.length === 0) fail('invalid auth configuration: auth.oauth.providers is required when mode is oauth');
    const providers = list.map((pr, i): ProviderConfig => {
      const p = isObj(pr) ? pr : {};
      const at = `invalid auth configuration: auth.oauth.providers[${i}]`;
      const name = str(p.name) ?? '';
      if (name === '') fail(`${at}.name is required`);
      const issuerUrl = str(p.issuerurl) ?? '';
      if (issuerUrl === '') fail(`${at}.issuerUrl is required`);
      let u: URL;
      try {
        u = new URL(issuerUrl);
      } catch (err) {
        fail(`${at}.issuerUrl is invalid: ${(err as Error).message}`);
      }
      if (!u.host) fail(`${at}.issuerUrl must be an absolute URL with host`);
      if (u.protocol !== 'https:' && !(u.protocol === 'http:' && (LOOPBACK.has(u.hostname) || insecureUrl)))
        fail(`${at}.issuerUrl must use HTTPS (set THV_REGISTRY_INSECURE_URL=true to allow HTTP)`);
      const audience = str(p.audience) ?? '';
      if (audience === '') fail(`${at}.audience is required`);
      const opt = (k: string) => str(p[k]) || undefined;
      const secretFile = opt('clientsecretfile');
      if (secretFile !== undefined && !isAbsolute(secretFile)) fail(`${at}.clientSecretFile must be an absolute path`);
      return {
        name,
        issuerUrl,
        audience,
        jwksUrl: opt('jwksurl'),
        clientId: opt('clientid'),
        clientSecretFile: secretFile,
        caCertPath: opt('cacertpath'),
        authTokenFile: opt('authtokenfile'),
        introspectionUrl: opt('introspectionurl'),
        allowPrivateIP: p.allowprivateip === true || p.allowprivateip === 'true',
      };
    });
    auth.oauth = { resourceUrl: str(o.resourceurl) ?? '', realm: str(o.realm) || 'mcp-registry', providers };
  } else if (o) {
    auth.oauth = { resourceUrl: str(o.resourceurl) ?? '', realm: str(o.realm) || 'mcp-registry', providers: [] };
  }
  if (isObj(a.authz)) {
    const rolesRaw = isObj(a.authz.roles) ? a.authz.roles : {};
    const roles: RoleRules = {};
    for (const role of ROLE_NAMES) {
      const rules = rolesRaw[role.toLowerCase()];
      if (rules === undefined || rules === null) continue;
      if (!Array.isArray(rules) || !rules.every(isObj)) fail(`invalid auth configuration: auth.authz.roles.${role} must be a list of claim maps`);
      roles[role] = rules as Array<Record<string, unknown>>;
    }
    auth.authz = { roles };
  }
  return auth;
}

/** Parses and validates a configuration document (already read). */
export function parseConfig(text: string, env: NodeJS.ProcessEnv = process.env): RegistryServerConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ThvError(ErrorCodes.InvalidConfig, `invalid configuration: cannot parse YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) doc = {};
  if (!isObj(doc)) fail('the configuration must be a YAML map');
  const root = normalizeKeys(doc) as Obj;
  applyEnv(root, env);
  const insecureUrl = /^(1|true)$/i.test(env.THV_REGISTRY_INSECURE_URL ?? '');

  const rawSources = Array.isArray(root.sources) ? root.sources : [];
  if (rawSources.length === 0) fail('at least one source must be configured');
  const seen = new Set<string>();
  const sources = rawSources.map((s, i) => sourceOf(s, i, seen));
  const managed = sources.filter((s) => s.type === 'managed').length;
  if (managed > 1) fail(`at most one managed source is allowed, found ${managed}`);

  const rawRegs = Array.isArray(root.registries) ? root.registries : [];
  if (rawRegs.length === 0) fail('at least one registry must be configured');
  const regNames = new Set<string>();
  const registries = rawRegs.map((r, i): RegistryConfig => {
    const o = isObj(r) ? r : {};
    const name = str(o.name) ?? '';
    if (name === '') fail(`registries[${i}]: name is required`);
    if (regNames.has(name)) fail(`registries[${i}]: duplicate registry name '${name}'`);
    regNames.add(name);
    const p = `registries[${i}] (${name}): `;
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name))
      fail(`${p}name must be 1-128 characters of letters, digits, '.', '_' or '-' (it is a URL path segment)`);
    const list = Array.isArray(o.sources) ? o.sources.map(String) : [];
    if (list.length === 0) fail(`${p}at least one source is required`);
    for (const s of list) if (!seen.has(s)) fail(`${p}references unknown source '${s}'`);
    if (new Set(list).size !== list.length) fail(`${p}duplicate source in sources`);
    return { name, sources: list, claims: claimsOf(o.claims, p) };
  });

  return {
    sources,
    registries,
    database: databaseOf(root.database, env),
    auth: authOf(root.auth, insecureUrl),
    telemetry: telemetryOf(root.telemetry),
    insecureUrl,
  };
}

/** Reads `path` (symlinks resolved) and validates it. */
export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): RegistryServerConfig {
  let text: string;
  try {
    text = readFileSync(realpathSync(path), 'utf8');
  } catch (err) {
    throw new ThvError(ErrorCodes.InvalidConfig, `failed to load configuration: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  void dirname;
  return parseConfig(text, env);
}

/**
 * Validates a source given through the admin API (`PUT /v1/sources/{name}`) with the same rules as
 * the file, returning the reference's API message (`git.repository is required`) on failure.
 */
export function parseSourceBody(name: string, body: unknown): SourceConfig {
  const raw = { ...(normalizeKeys(isObj(body) ? body : {}) as Obj), name };
  try {
    return sourceOf(raw, 0, new Set());
  } catch (err) {
    const msg = (err as Error).message.replace(/^invalid configuration: /, '').replace(/^source\[0\](?: \([^)]*\))?: /, '');
    throw new ThvError(ErrorCodes.InvalidArgument, msg);
  }
}
