/**
 * Builds ToolHive's RunConfig (schema v0.1.0, spec §1.5/§1.6) from validated `thv run` options.
 *
 * What happens here: naming, transport and port defaults, env files + `--env`, labels, the permission
 * profile (built-in or file) with `--network`/`--volume` applied, network-isolation reconciliation, the
 * tools override file, authz/audit/webhook files, OIDC, telemetry, remote auth, token exchange and header
 * forwarding blocks. What does not: registry lookups, image builds/pulls, port allocation and DNS (callers
 * pass registry results in `context`, and fill ports in with `withResolvedPorts` once they are bound).
 *
 * Secrets: a secret VALUE never goes into the RunConfig. ToolHive persists `--oidc-client-secret` and the
 * token-exchange client secret in plain text and moves remote-auth secrets into its secrets store; we keep
 * every literal secret given on the command line in memory only (`inMemorySecrets`). The foreground proxy
 * uses them directly; a launcher that starts a detached proxy passes them through the environment
 * (`IN_MEMORY_SECRET_ENV`, two of which are ToolHive's own fallback variables). Secret *files* are stored
 * by path and read at start, so restarts keep working.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, isAbsolute, join, posix } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ErrorCodes, ThvError } from '../errors.js';
import type {
  OidcConfigJson,
  RunConfig,
  RuntimeKind,
  TelemetryConfigJson,
  ToolOverride,
  TransportType,
} from './run-config.js';
import { classifyServerArg, defaultWorkloadName, sanitizeWorkloadName, goCleanPath } from './naming.js';
import { canonicalHeaderKey, parseDurationNs, type RunOptions } from './run-options.js';
import { loadToolsOverride } from './tools-override.js';
import { readAuthzConfigFile } from '../authz/config.js';

export const RUN_CONFIG_SCHEMA_VERSION = 'v0.1.0';

/** What a registry lookup found for the positional argument (spec §6.2). */
export interface RegistryServerInfo {
  /** The registry entry's full name, recorded as `registry_server_name`. */
  name: string;
  /** Container image of an image entry. */
  image?: string;
  /** URL of a remote entry. */
  remoteUrl?: string;
  transport?: TransportType;
  targetPort?: number;
  proxyPort?: number;
  /** Default server arguments, used when no `-- args` were given. */
  args?: string[];
  /** Tool names the entry declares; `--tools` and override keys must be among them. */
  tools?: string[];
  /** The entry's permission profile object. */
  permissions?: Record<string, unknown>;
  registryApiUrl?: string;
  registryUrl?: string;
}

/** config.yaml `otel:` values, used for telemetry flags that were not given explicitly (spec §8.1). */
export interface OtelConfigDefaults {
  endpoint?: string;
  samplingRate?: number;
  envVars?: string[];
  insecure?: boolean;
  enablePrometheusMetricsPath?: boolean;
  tracingEnabled?: boolean;
  metricsEnabled?: boolean;
  useLegacyAttributes?: boolean;
}

export interface BuildRunConfigContext {
  /** Result of the registry lookup, when the argument named a registry entry. */
  registry?: RegistryServerInfo;
  /** Image reference to persist instead of the argument (e.g. a locally built protocol-scheme image). */
  image?: string;
  otelDefaults?: OtelConfigDefaults;
  /** Base for relative volume sources (default: process.cwd()). */
  cwd?: string;
}

/** Secret values from the command line. Never written to disk. */
export interface InMemorySecrets {
  oidcClientSecret?: string;
  remoteAuthClientSecret?: string;
  remoteAuthBearerToken?: string;
  tokenExchangeClientSecret?: string;
}

/** Environment variables that carry `InMemorySecrets` to a detached proxy process. */
export const IN_MEMORY_SECRET_ENV: Readonly<Record<keyof InMemorySecrets, string>> = {
  oidcClientSecret: 'THV_OIDC_CLIENT_SECRET',
  remoteAuthClientSecret: 'THV_REMOTE_AUTH_CLIENT_SECRET',
  remoteAuthBearerToken: 'TOOLHIVE_REMOTE_AUTH_BEARER_TOKEN',
  tokenExchangeClientSecret: 'TOOLHIVE_TOKEN_EXCHANGE_CLIENT_SECRET',
};

export interface BuiltRunConfig {
  config: RunConfig;
  inMemorySecrets: InMemorySecrets;
  /** Things to tell the user (sanitised name, skipped volume, dropped isolation, …). */
  warnings: string[];
}

const HTTP_TRANSPORTS: ReadonlySet<TransportType> = new Set(['sse', 'streamable-http']);

function invalidArgument(message: string): ThvError {
  return new ThvError(ErrorCodes.InvalidArgument, message);
}

function invalidConfig(message: string, cause?: unknown): ThvError {
  return new ThvError(ErrorCodes.InvalidConfig, message, cause === undefined ? undefined : { cause });
}

// ---------------------------------------------------------------------------------------------------
// Transport environment and ports

/**
 * Sets the transport variables the server reads (ToolHive's `SetTransportEnvironmentVariables`):
 * `MCP_TRANSPORT` always; for sse/streamable-http with a known target port also `MCP_PORT` and
 * `FASTMCP_PORT`. Returns a new RunConfig.
 */
export function withTransportEnv(config: RunConfig, targetPort: number | undefined = config.target_port): RunConfig {
  const env: Record<string, string> = { ...(config.env_vars ?? {}), MCP_TRANSPORT: config.transport };
  if (HTTP_TRANSPORTS.has(config.transport) && targetPort !== undefined && targetPort > 0) {
    env['MCP_PORT'] = String(targetPort);
    env['FASTMCP_PORT'] = String(targetPort);
  }
  return { ...config, env_vars: env };
}

/**
 * Records the ports chosen at start (when the RunConfig said 0): `port`, `target_port` (sse/streamable-http
 * only), the `toolhive-port` label and the transport environment. Returns a new RunConfig.
 */
export function withResolvedPorts(config: RunConfig, ports: { port: number; targetPort?: number }): RunConfig {
  const next: RunConfig = { ...config, port: ports.port };
  if (HTTP_TRANSPORTS.has(config.transport) && ports.targetPort !== undefined && ports.targetPort > 0) {
    next.target_port = ports.targetPort;
  }
  next.container_labels = { ...(config.container_labels ?? {}), 'toolhive-port': String(ports.port) };
  return withTransportEnv(next);
}

// ---------------------------------------------------------------------------------------------------
// Files

/** `--env-file`: lines trimmed, blank and `#` lines skipped, `export ` removed, lines without `=` skipped. */
export function parseEnvFile(text: string, source: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (let line of text.split('\n')) {
    line = line.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('export ')) line = line.slice('export '.length);
    const idx = line.indexOf('=');
    if (idx === -1) continue;
    if (idx === 0) throw invalidConfig(`failed to process env file ${source}: empty variable name in ${JSON.stringify(line)}`);
    // Quotes are not stripped (ToolHive behaviour).
    env[line.slice(0, idx)] = line.slice(idx + 1);
  }
  return env;
}

function readEnvFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw invalidConfig(`failed to process env file ${path}: ${(err as Error).message}`, err);
  }
  return parseEnvFile(text, path);
}

/** `--env-file-dir`: every non-hidden regular file; unreadable/invalid files are skipped with a warning. */
function readEnvDir(dir: string, warnings: string[]): Record<string, string> {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw invalidConfig(`failed to read env files directory ${dir}: ${(err as Error).message}`, err);
  }
  const env: Record<string, string> = {};
  for (const name of names) {
    if (name.startsWith('.')) continue;
    const path = join(dir, name);
    try {
      if (!statSync(path).isFile()) continue;
      Object.assign(env, parseEnvFile(readFileSync(path, 'utf8'), path));
    } catch (err) {
      warnings.push(`Failed to process env file ${name}: ${(err as Error).message}`);
    }
  }
  return env;
}

/** Reads a JSON (`.json`) or YAML file into a value. */
function readStructuredFile(path: string, what: string, opts: { jsonOnly?: boolean } = {}): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw invalidConfig(`failed to load ${what} from ${path}: ${(err as Error).message}`, err);
  }
  const ext = extname(path).toLowerCase();
  try {
    if (opts.jsonOnly === true || ext === '.json') return JSON.parse(text) as unknown;
    return parseYaml(text) as unknown;
  } catch (err) {
    throw invalidConfig(`failed to parse ${what} ${path}: ${(err as Error).message}`, err);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `--authz-config`: `.json`, `.yaml` or `.yml`, no `..` in the path; stored raw in `authz_config`. */
function loadAuthzConfig(path: string): Record<string, unknown> {
  if (path.split(/[\\/]/).includes('..')) {
    throw invalidConfig(`failed to load authorization configuration: path must not contain "..": ${path}`);
  }
  const ext = extname(path).toLowerCase();
  if (ext !== '.json' && ext !== '.yaml' && ext !== '.yml') {
    throw invalidConfig(`failed to load authorization configuration: ${path} must be a .json, .yaml or .yml file`);
  }
  // Syntax errors carry file:line:col; the policies themselves are compiled when the proxy starts.
  const doc = readAuthzConfigFile(path).doc;
  if (!isObject(doc)) throw invalidConfig(`failed to load authorization configuration: ${path} does not hold an object`);
  return doc;
}

/** `--audit-config`: a JSON object (camelCase keys, spec §8.3). */
function loadAuditConfig(path: string): Record<string, unknown> {
  const doc = readStructuredFile(path, 'audit configuration', { jsonOnly: true });
  if (!isObject(doc)) throw invalidConfig(`failed to load audit configuration: ${path} does not hold an object`);
  return doc;
}

/** ToolHive's `audit.DefaultConfig()` as JSON (used by `--enable-audit` without a file). */
export const DEFAULT_AUDIT_CONFIG: Readonly<Record<string, unknown>> = { detectApplicationErrors: true, maxDataSize: 1024 };

interface WebhookJson extends Record<string, unknown> {
  name: string;
}

const WEBHOOK_MIN_TIMEOUT_NS = 1_000_000_000n;
const WEBHOOK_MAX_TIMEOUT_NS = 30_000_000_000n;

function normaliseWebhook(entry: unknown, where: string): WebhookJson {
  if (!isObject(entry)) throw invalidConfig(`${where}: each webhook must be an object`);
  const name = entry['name'];
  if (typeof name !== 'string' || name === '') throw invalidConfig(`${where}: webhook name is required`);
  const at = `${where}: webhook ${JSON.stringify(name)}`;
  const url = entry['url'];
  if (typeof url !== 'string' || url === '') throw invalidConfig(`${at}: url is required`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidConfig(`${at}: invalid url ${JSON.stringify(url)}`);
  }
  const tls = isObject(entry['tls_config']) ? entry['tls_config'] : undefined;
  const insecure = tls?.['insecure_skip_verify'] === true;
  if (parsed.protocol !== 'https:' && !(insecure && parsed.protocol === 'http:')) {
    throw invalidConfig(`${at}: url must use https unless tls_config.insecure_skip_verify is set`);
  }
  const policy = entry['failure_policy'];
  if (policy !== 'fail' && policy !== 'ignore') throw invalidConfig(`${at}: failure_policy must be "fail" or "ignore"`);
  const out: WebhookJson = { ...entry, name };
  const timeout = entry['timeout'];
  if (timeout !== undefined && timeout !== null) {
    let ns: bigint;
    try {
      ns = typeof timeout === 'number' ? BigInt(Math.trunc(timeout)) : parseDurationNs(String(timeout));
    } catch {
      throw invalidConfig(`${at}: invalid timeout ${JSON.stringify(timeout)}`);
    }
    if (ns < WEBHOOK_MIN_TIMEOUT_NS || ns > WEBHOOK_MAX_TIMEOUT_NS) {
      throw invalidConfig(`${at}: timeout must be between 1s and 30s`);
    }
    out['timeout'] = Number(ns); // persisted as integer nanoseconds (quirk 6)
  }
  return out;
}

/** `--webhook-config` files merged in order; a later webhook with the same name replaces the earlier one in place. */
function loadWebhooks(paths: string[]): { validating: WebhookJson[]; mutating: WebhookJson[] } {
  const merged = { validating: [] as WebhookJson[], mutating: [] as WebhookJson[] };
  for (const path of paths) {
    const doc = readStructuredFile(path, 'webhook configuration');
    if (doc === null || doc === undefined) continue;
    if (!isObject(doc)) throw invalidConfig(`webhook configuration ${path} must hold "validating" and/or "mutating" lists`);
    for (const kind of ['validating', 'mutating'] as const) {
      const list = doc[kind];
      if (list === undefined || list === null) continue;
      if (!Array.isArray(list)) throw invalidConfig(`webhook configuration ${path}: "${kind}" must be a list`);
      for (const entry of list) {
        const hook = normaliseWebhook(entry, `webhook configuration ${path}`);
        const existing = merged[kind].findIndex((h) => h.name === hook.name);
        if (existing === -1) merged[kind].push(hook);
        else merged[kind][existing] = hook;
      }
    }
  }
  return merged;
}

// ---------------------------------------------------------------------------------------------------
// Permission profile, network and volumes

/** Built-in profiles as ToolHive serialises them (`omitempty` drops the empty lists). */
export function builtinPermissionProfile(name: 'none' | 'network'): Record<string, unknown> {
  return name === 'network'
    ? { name: 'network', network: { outbound: { insecure_allow_all: true }, inbound: {} } }
    : { name: 'none', network: { outbound: {}, inbound: {} } };
}

function loadPermissionProfile(options: RunOptions, registry: RegistryServerInfo | undefined): Record<string, unknown> {
  const ref = options.permissionProfile;
  if (ref === 'none' || ref === 'stdio') return builtinPermissionProfile('none');
  if (ref === 'network') return builtinPermissionProfile('network');
  if (ref !== undefined) {
    const doc = readStructuredFile(ref, 'permission profile', { jsonOnly: true });
    if (!isObject(doc)) throw invalidConfig(`failed to parse permission profile: ${ref} does not hold an object`);
    return structuredClone(doc);
  }
  if (registry?.permissions !== undefined) return structuredClone(registry.permissions);
  return builtinPermissionProfile('network');
}

function networkMode(profile: Record<string, unknown>): string {
  const network = profile['network'];
  return isObject(network) && typeof network['mode'] === 'string' ? network['mode'] : '';
}

/** ToolHive's `networking.IsBridgeMode`. */
function isBridgeMode(mode: string): boolean {
  return mode === '' || mode === 'bridge' || mode === 'default';
}

/** Source and target of a mount declaration (`path`, `host:container`, `scheme://resource:container`). */
function parseMount(declaration: string): { source: string; target: string; resource: boolean } {
  const uri = /^([a-zA-Z][a-zA-Z0-9_-]*):\/\/(.+)$/.exec(declaration);
  if (uri !== null) {
    const rest = uri[2] as string;
    for (let i = rest.lastIndexOf(':'); i > 0; i = rest.lastIndexOf(':', i - 1)) {
      const target = rest.slice(i + 1);
      if (target.startsWith('/') || (target !== '' && !target.includes(':'))) {
        return { source: `${uri[1]}://${goCleanPath(rest.slice(0, i))}`, target: posix.normalize(target), resource: true };
      }
    }
  }
  const colons = declaration.split(':').length - 1;
  if (colons === 0) {
    const p = goCleanPath(declaration);
    return { source: p, target: p, resource: false };
  }
  if (colons === 1) {
    const [host, container] = declaration.split(':') as [string, string];
    if (host === '' || container === '') throw invalidArgument(`--volume: invalid mount declaration format: ${declaration}`);
    return { source: goCleanPath(host), target: posix.normalize(container), resource: false };
  }
  throw invalidArgument(
    `--volume: invalid mount declaration format: ${declaration} (multiple colons found, expected single colon separator)`,
  );
}

function mountTargets(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.filter((m): m is string => typeof m === 'string').map((m) => {
    try {
      return parseMount(m).target;
    } catch {
      return m;
    }
  });
}

/** `--volume host:container[:ro]`: appended to the profile's read/write lists (ToolHive's processVolumeMounts). */
function applyVolumes(profile: Record<string, unknown>, volumes: string[], cwd: string, warnings: string[]): void {
  if (volumes.length === 0) return;
  const existing = new Set([...mountTargets(profile['read']), ...mountTargets(profile['write'])]);
  for (const volume of volumes) {
    const readOnly = volume.endsWith(':ro');
    const spec = readOnly ? volume.slice(0, -':ro'.length) : volume;
    const { source, target, resource } = parseMount(spec);
    if (!resource) {
      const absolute = isAbsolute(source) ? source : join(cwd, source);
      if (!existsSync(absolute)) throw invalidArgument(`--volume: volume source path does not exist: ${absolute}`);
    }
    if (existing.has(target)) {
      warnings.push(`Skipping duplicate mount target ${target} (--volume ${volume})`);
      continue;
    }
    const key = readOnly ? 'read' : 'write';
    const list = Array.isArray(profile[key]) ? (profile[key] as unknown[]) : [];
    profile[key] = [...list, spec];
    existing.add(target);
  }
}

// ---------------------------------------------------------------------------------------------------
// Auth, telemetry, remote

/** ToolHive's `DefaultResourceIndicator`: the URL with lower-cased scheme and host and no fragment. */
export function defaultResourceIndicator(remoteUrl: string): string | undefined {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^#]*)/.exec(remoteUrl);
  if (m === null || m[2] === '') return undefined;
  const authority = m[2] as string;
  const at = authority.lastIndexOf('@');
  const host = at === -1 ? authority.toLowerCase() : `${authority.slice(0, at + 1)}${authority.slice(at + 1).toLowerCase()}`;
  return `${(m[1] as string).toLowerCase()}://${host}${m[3]}`;
}

/**
 * `oidc_config`, PascalCase like ToolHive (its struct has no JSON tags, so every field is written).
 * `ClientSecret` is always written empty: the value stays in memory.
 */
function oidcConfig(options: RunOptions): OidcConfigJson | undefined {
  const o = options.oidc;
  const configured =
    o.issuer !== undefined || o.audience !== undefined || o.jwksUrl !== undefined ||
    o.introspectionUrl !== undefined || o.clientId !== undefined || o.clientSecret !== undefined;
  if (!configured && options.resourceUrl === undefined) return undefined;
  return {
    Issuer: o.issuer ?? '',
    Audience: o.audience ?? '',
    JWKSURL: o.jwksUrl ?? '',
    ClientID: o.clientId ?? '',
    ClientSecret: '',
    CACertPath: configured ? (options.thvCaBundle ?? '') : '',
    AuthTokenFile: configured ? (options.jwksAuthTokenFile ?? '') : '',
    AllowPrivateIP: configured ? options.jwksAllowPrivateIp : false,
    InsecureAllowHTTP: configured ? o.insecureAllowHttp : false,
    IntrospectionURL: o.introspectionUrl ?? '',
    ResourceURL: options.resourceUrl ?? '',
    Scopes: configured ? o.scopes : [],
  };
}

function telemetryConfig(options: RunOptions, defaults: OtelConfigDefaults, workloadName: string): TelemetryConfigJson | undefined {
  const given = (flag: string) => options.explicitFlags.includes(flag);
  const o = options.otel;
  const endpoint = given('otel-endpoint') ? o.endpoint : (defaults.endpoint || o.endpoint);
  const samplingRate =
    !given('otel-sampling-rate') && defaults.samplingRate !== undefined && defaults.samplingRate !== 0
      ? defaults.samplingRate
      : o.samplingRate;
  const envVars = !given('otel-env-vars') && (defaults.envVars?.length ?? 0) > 0 ? (defaults.envVars as string[]) : o.envVars;
  const insecure = given('otel-insecure') ? o.insecure : (defaults.insecure ?? o.insecure);
  const prometheus = given('otel-enable-prometheus-metrics-path')
    ? o.enablePrometheusMetricsPath
    : (defaults.enablePrometheusMetricsPath ?? o.enablePrometheusMetricsPath);
  const tracing = given('otel-tracing-enabled') ? o.tracingEnabled : (defaults.tracingEnabled ?? o.tracingEnabled);
  const metrics = given('otel-metrics-enabled') ? o.metricsEnabled : (defaults.metricsEnabled ?? o.metricsEnabled);
  const legacy = given('otel-use-legacy-attributes') ? o.useLegacyAttributes : (defaults.useLegacyAttributes ?? o.useLegacyAttributes);

  if ((endpoint === undefined || endpoint === '') && !prometheus) return undefined;
  if (!tracing && !metrics && !prometheus) return undefined;
  const config: TelemetryConfigJson = {
    endpoint: endpoint || undefined,
    serviceName: o.serviceName ?? `thv-${workloadName}`,
    tracingEnabled: tracing,
    metricsEnabled: metrics,
    samplingRate: String(samplingRate),
    headers: Object.keys(o.headers).length > 0 ? o.headers : undefined,
    insecure,
    enablePrometheusMetricsPath: prometheus,
    environmentVariables: envVars.length > 0 ? envVars : undefined,
    customAttributes: Object.keys(o.customAttributes).length > 0 ? o.customAttributes : undefined,
    useLegacyAttributes: legacy,
  };
  return config;
}

function remoteAuthConfig(options: RunOptions, remoteUrl: string): Record<string, unknown> {
  const r = options.remoteAuth;
  const resource = r.resource ?? (options.resourceUrl !== undefined ? defaultResourceIndicator(remoteUrl) : undefined);
  return {
    client_id: r.clientId,
    // client_secret: never persisted (in memory); ToolHive stores a secrets-store reference here.
    client_secret_file: r.clientSecret === undefined ? r.clientSecretFile : undefined,
    scopes: r.scopes.length > 0 ? r.scopes : undefined,
    skip_browser: r.skipBrowser || undefined,
    timeout: Math.round(r.timeoutMs * 1e6), // integer nanoseconds, like Go's time.Duration
    callback_port: r.callbackPort,
    use_pkce: false, // no omitempty in ToolHive; PKCE is decided by the OAuth flow
    resource,
    issuer: r.issuer,
    authorize_url: r.authorizeUrl,
    token_url: r.tokenUrl,
    scope_param_name: r.scopeParamName,
    bearer_token_file: r.bearerToken === undefined ? r.bearerTokenFile : undefined,
  };
}

function tokenExchangeConfig(options: RunOptions): Record<string, unknown> | undefined {
  const t = options.tokenExchange;
  if (t.url === undefined) return undefined;
  return {
    token_url: t.url,
    client_id: t.clientId,
    // client_secret: kept in memory (or read from TOOLHIVE_TOKEN_EXCHANGE_CLIENT_SECRET at start).
    audience: t.audience,
    scopes: t.scopes.length > 0 ? t.scopes : undefined,
    subject_token_type: t.subjectTokenType,
    header_strategy: t.headerName !== undefined ? 'custom' : 'replace',
    external_token_header_name: t.headerName,
    // Our addition: the secret file is read at start, so its content is never persisted.
    thv_client_secret_file: t.clientSecret === undefined ? t.clientSecretFile : undefined,
  };
}

// ---------------------------------------------------------------------------------------------------
// The builder

/** Drops `undefined` members (and empty objects they leave behind are kept: `{}` is meaningful). */
function compact<T extends Record<string, unknown>>(obj: T): T {
  for (const key of Object.keys(obj)) if (obj[key] === undefined) delete obj[key];
  return obj;
}

function resolveRuntime(options: RunOptions, kind: ReturnType<typeof classifyServerArg>['kind']): RuntimeKind | undefined {
  if (options.runtime === 'process' || options.runtime === 'docker') return options.runtime;
  // `auto` unresolved: a local path can only run as a process.
  return kind === 'local-path' ? 'process' : undefined;
}

/**
 * Builds the RunConfig for `thv run [options] <serverArg> -- <serverArgs…>`.
 * `options.runtime` should be resolved (`process`/`docker`) by the caller; `auto` is accepted and left out of
 * `thv_runtime` (except for local paths, which only the process runtime can run).
 * Throws `ThvError` (InvalidArgument for bad arguments, InvalidConfig for unreadable or invalid files).
 */
export function buildRunConfig(
  options: RunOptions,
  serverArg: string,
  serverArgs: string[],
  context: BuildRunConfigContext = {},
): BuiltRunConfig {
  const warnings: string[] = [];
  const registry = context.registry;
  const argKind = classifyServerArg(serverArg);
  const remoteUrl = argKind.kind === 'remote' ? argKind.url : registry?.remoteUrl;
  const isRemote = remoteUrl !== undefined;
  const runtime = isRemote ? undefined : resolveRuntime(options, argKind.kind);

  if (argKind.kind === 'protocol' && argKind.pkg.trim() === '') {
    throw invalidArgument(`invalid protocol scheme provided for MCP server: ${serverArg}: the package name is empty`);
  }
  if (options.buildWith.length > 0 && !(argKind.kind === 'protocol' && argKind.scheme === 'uvx')) {
    throw invalidArgument('--build-with is only supported for uvx:// packages');
  }

  // Name: --name, else derived from the argument (spec §1.3); sanitised for file-system use.
  const requestedName = options.name ?? defaultWorkloadName(serverArg, { resolvedInRegistry: registry !== undefined });
  if (requestedName === '') {
    throw invalidArgument(`could not derive a workload name from ${JSON.stringify(serverArg)}; pass --name`);
  }
  const { name, changed } = sanitizeWorkloadName(requestedName);
  if (changed) {
    warnings.push(`The name ${JSON.stringify(requestedName)} contained invalid characters and was sanitized to ${JSON.stringify(name)}`);
  }

  // Transport: --transport, else the registry entry, else the default. ToolHive's CLI default is
  // streamable-http for everything (quirk 1), which makes npx/uvx servers fail unless --transport stdio is
  // given. Package servers and local scripts almost always speak stdio, so on the process runtime — where
  // nothing like a container image's metadata exists — we default those to stdio instead.
  const transport: TransportType =
    options.transport ??
    registry?.transport ??
    (!isRemote && runtime === 'process' && (argKind.kind === 'protocol' || argKind.kind === 'local-path')
      ? 'stdio'
      : 'streamable-http');
  const isHttp = HTTP_TRANSPORTS.has(transport);
  if (options.stateless && !isHttp) {
    throw invalidArgument('--stateless requires the sse or streamable-http transport, not stdio');
  }

  // Ports: 0 means "pick at start" (see withResolvedPorts). Registry ports apply to HTTP servers and remotes.
  const port = options.proxyPort || ((isHttp || isRemote) ? (registry?.proxyPort ?? 0) : 0);
  const targetPort = isHttp ? (options.targetPort || registry?.targetPort || 0) : 0;
  const targetHost = isRemote ? new URL(remoteUrl).host : options.targetHost;

  // Environment: env files, then --env (remote servers get no --env, as in ToolHive).
  const env: Record<string, string> = {};
  if (options.envFileDir !== undefined) Object.assign(env, readEnvDir(options.envFileDir, warnings));
  if (options.envFile !== undefined) Object.assign(env, readEnvFile(options.envFile));
  if (isRemote) {
    if (Object.keys(options.env).length > 0) warnings.push('--env is ignored for remote servers');
  } else {
    Object.assign(env, options.env);
  }

  // Tools: the override file, and both lists checked against the registry's tool list when it has one.
  const toolsOverride: Record<string, ToolOverride> | undefined =
    options.toolsOverride !== undefined ? loadToolsOverride(options.toolsOverride) : undefined;
  if (registry?.tools !== undefined) {
    for (const tool of Object.keys(toolsOverride ?? {})) {
      if (!registry.tools.includes(tool)) throw invalidArgument(`tool ${tool} not found in registry`);
    }
    for (const tool of options.tools) {
      const actual = Object.entries(toolsOverride ?? {}).find(([, o]) => o.name === tool)?.[0] ?? tool;
      if (!registry.tools.includes(actual)) throw invalidArgument(`tool ${actual} not found in registry`);
    }
  }

  // Permission profile, --network, isolation and volumes.
  const profile = loadPermissionProfile(options, registry);
  if (options.network !== undefined) {
    profile['network'] = { ...(isObject(profile['network']) ? profile['network'] : {}), mode: options.network };
  }
  let isolateNetwork = options.isolateNetwork;
  const mode = networkMode(profile);
  if (isolateNetwork && !isBridgeMode(mode)) {
    if (mode === 'none') {
      isolateNetwork = false;
    } else if (options.isolateNetworkExplicit) {
      throw invalidArgument(
        `network isolation cannot be enforced with the resolved network mode ${JSON.stringify(mode)}: use a bridge ` +
          `network mode to keep enforced isolation, or pass --isolate-network=false to keep ${JSON.stringify(mode)} networking`,
      );
    } else {
      isolateNetwork = false;
      warnings.push(`Network isolation is not possible with network mode ${JSON.stringify(mode)}; running without it`);
    }
  }
  applyVolumes(profile, options.volumes, context.cwd ?? process.cwd(), warnings);
  if (runtime === 'process') {
    if (options.volumes.length > 0) warnings.push('--volume has no effect on the process runtime');
    if (options.publish.length > 0) warnings.push('--publish has no effect on the process runtime');
  }

  // Policy files.
  const authzConfig = options.authzConfig !== undefined ? loadAuthzConfig(options.authzConfig) : undefined;
  const auditConfig =
    options.auditConfig !== undefined
      ? loadAuditConfig(options.auditConfig)
      : options.enableAudit
        ? { ...DEFAULT_AUDIT_CONFIG }
        : undefined;
  const webhooks = options.webhookConfigs.length > 0 ? loadWebhooks(options.webhookConfigs) : undefined;

  // Header forwarding is for remote servers only.
  const plainHeaders = options.remoteForwardHeaders;
  const secretHeaders = options.remoteForwardHeadersSecret;
  const hasHeaders = Object.keys(plainHeaders).length > 0 || Object.keys(secretHeaders).length > 0;
  if (hasHeaders && !isRemote) warnings.push('--remote-forward-headers only apply to remote servers and are ignored');
  for (const header of Object.keys(plainHeaders)) {
    if (canonicalHeaderKey(header) === 'Authorization') {
      warnings.push('--remote-forward-headers sets Authorization in plain text in the workload configuration');
    }
  }

  const runtimeConfig =
    options.runtimeImage !== undefined || options.runtimeAddPackages.length > 0 || options.buildWith.length > 0
      ? compact({
          builder_image: options.runtimeImage,
          additional_packages: options.runtimeAddPackages.length > 0 ? options.runtimeAddPackages : undefined,
          build_with: options.buildWith.length > 0 ? options.buildWith : undefined,
        })
      : undefined;

  const cmdArgs = serverArgs.length > 0 ? serverArgs : (registry?.args ?? []);
  const image = context.image ?? (isRemote ? (argKind.kind === 'remote' ? remoteUrl : registry?.name) : registry?.image) ?? serverArg;
  const proxyMode = transport === 'stdio' ? options.proxyMode : transport;

  // Standard labels win over user labels (spec §4.2).
  const labels: Record<string, string> = {
    ...options.labels,
    toolhive: 'true',
    'toolhive-name': name,
    'toolhive-basename': name,
    'toolhive-transport': transport,
    'toolhive-port': String(port),
  };

  const config = compact<RunConfig & Record<string, unknown>>({
    schema_version: RUN_CONFIG_SCHEMA_VERSION,
    image,
    remote_url: remoteUrl,
    registry_api_url: registry?.registryApiUrl,
    registry_url: registry?.registryUrl,
    registry_server_name: registry?.name,
    remote_auth_config: isRemote ? compact(remoteAuthConfig(options, remoteUrl)) : undefined,
    cmd_args: cmdArgs.length > 0 ? cmdArgs : undefined,
    name,
    container_name: name,
    base_name: name,
    transport,
    host: options.host,
    port,
    target_port: targetPort > 0 ? targetPort : undefined,
    target_host: targetHost,
    allowed_origins: options.allowedOrigins.length > 0 ? options.allowedOrigins : undefined,
    publish: options.publish.length > 0 ? options.publish : undefined,
    permission_profile_name_or_path: options.permissionProfile,
    permission_profile: profile,
    env_vars: env,
    debug: options.debug || undefined,
    volumes: options.volumes.length > 0 ? options.volumes : undefined,
    container_labels: labels,
    oidc_config: oidcConfig(options),
    token_exchange_config: (() => {
      const t = tokenExchangeConfig(options);
      return t === undefined ? undefined : compact(t);
    })(),
    authz_config: authzConfig,
    authz_config_path: options.authzConfig,
    audit_config: auditConfig,
    audit_config_path: options.auditConfig,
    telemetry_config: (() => {
      const t = telemetryConfig(options, context.otelDefaults ?? {}, name);
      return t === undefined ? undefined : compact(t as Record<string, unknown>);
    })(),
    secrets: options.secrets.length > 0 ? options.secrets : undefined,
    isolate_network: isolateNetwork || undefined,
    allow_docker_gateway: options.allowDockerGateway || undefined,
    trust_proxy_headers: options.trustProxyHeaders || undefined,
    strict_protocol_validation: options.strictProtocolValidation || undefined,
    stateless: options.stateless || undefined,
    session_ttl: options.sessionTtl,
    proxy_mode: proxyMode,
    thv_ca_bundle: options.thvCaBundle,
    jwks_auth_token_file: options.jwksAuthTokenFile,
    k8s_pod_template_patch: options.k8sPodPatch,
    group: options.group,
    tools_filter: options.tools.length > 0 ? options.tools : undefined,
    tools_override: toolsOverride,
    ignore_config: { LoadGlobal: options.ignoreGlobally, PrintOverlays: options.printResolvedOverlays },
    validating_webhooks: webhooks !== undefined && webhooks.validating.length > 0 ? webhooks.validating : undefined,
    mutating_webhooks: webhooks !== undefined && webhooks.mutating.length > 0 ? webhooks.mutating : undefined,
    endpoint_prefix: options.endpointPrefix,
    runtime_config: runtimeConfig,
    header_forward:
      isRemote && hasHeaders
        ? compact({
            add_plaintext_headers: Object.keys(plainHeaders).length > 0 ? plainHeaders : undefined,
            add_headers_from_secret: Object.keys(secretHeaders).length > 0 ? secretHeaders : undefined,
          })
        : undefined,
    thv_runtime: runtime,
    thv_stdio_sessions: options.stdioSessions,
    thv_max_sessions: options.maxSessions,
  });

  const inMemorySecrets = compact<InMemorySecrets & Record<string, unknown>>({
    oidcClientSecret: options.oidc.clientSecret,
    remoteAuthClientSecret: isRemote ? options.remoteAuth.clientSecret : undefined,
    remoteAuthBearerToken: isRemote ? options.remoteAuth.bearerToken : undefined,
    tokenExchangeClientSecret: options.tokenExchange.url !== undefined ? options.tokenExchange.clientSecret : undefined,
  });

  return { config: withTransportEnv(config, targetPort), inMemorySecrets, warnings };
}

/** The `InMemorySecrets` as environment variables for a detached proxy process (see IN_MEMORY_SECRET_ENV). */
export function inMemorySecretsToEnv(secrets: InMemorySecrets): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, variable] of Object.entries(IN_MEMORY_SECRET_ENV) as Array<[keyof InMemorySecrets, string]>) {
    const value = secrets[key];
    if (value !== undefined) env[variable] = value;
  }
  return env;
}

/** Reads `InMemorySecrets` back from the environment of a detached proxy process. */
export function inMemorySecretsFromEnv(env: NodeJS.ProcessEnv = process.env): InMemorySecrets {
  const secrets: InMemorySecrets = {};
  for (const [key, variable] of Object.entries(IN_MEMORY_SECRET_ENV) as Array<[keyof InMemorySecrets, string]>) {
    const value = env[variable];
    if (value !== undefined && value !== '') secrets[key] = value;
  }
  return secrets;
}
