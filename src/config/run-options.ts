/**
 * Validation of the raw `thv run` flags (as collected by `addRunFlags`) into typed `RunOptions`, with one
 * zod schema. Every problem is reported at once, each naming the flag and what it accepts, e.g.
 * `--transport: expected one of stdio, sse, streamable-http, got "foo"`.
 *
 * Defaults are applied here, not in commander, so `explicitFlags` can list what the user actually set.
 * Checks that need the file system, DNS, the registry or the resolved transport happen later
 * (buildRunConfig, start-up).
 */
import { lookup } from 'node:dns/promises';
import { isIPv4, isIPv6 } from 'node:net';
import { z } from 'zod';
import { ErrorCodes, ThvError } from '../errors.js';
import type { ProxyMode, StdioSessionMode, TransportType } from './run-config.js';
import { attributeFlagName } from './run-flags.js';

export type RuntimeOption = 'auto' | 'process' | 'docker';
export type ImageVerificationMode = 'warn' | 'enabled' | 'disabled';

export const TRANSPORTS: readonly TransportType[] = ['stdio', 'sse', 'streamable-http'];
export const PROXY_MODES: readonly ProxyMode[] = ['streamable-http', 'sse'];
export const RUNTIME_OPTIONS: readonly RuntimeOption[] = ['auto', 'process', 'docker'];
export const STDIO_SESSION_MODES: readonly StdioSessionMode[] = ['per-session', 'shared'];
export const IMAGE_VERIFICATION_MODES: readonly ImageVerificationMode[] = ['warn', 'enabled', 'disabled'];
/** Short forms of `--token-exchange-subject-token-type`; full `urn:ietf:params:oauth:token-type:*` URNs also pass. */
export const SUBJECT_TOKEN_TYPES = ['access_token', 'id_token', 'jwt'] as const;

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_GROUP = 'default';
export const DEFAULT_MAX_SESSIONS = 100;
export const MAX_MAX_SESSIONS = 10_000;
export const DEFAULT_SESSION_TTL_MS = 2 * 60 * 60 * 1000;
export const DEFAULT_REMOTE_AUTH_TIMEOUT_MS = 30_000;
export const DEFAULT_REMOTE_AUTH_CALLBACK_PORT = 8666;
export const DEFAULT_OTEL_SAMPLING_RATE = 0.1;

/** Flags that may accompany `--from-config` (they control how, not what, to run). */
const FROM_CONFIG_COMPATIBLE = new Set(['from-config', 'foreground', 'debug']);

/** Header names that can never be forwarded to a remote server (spec §3.2 header-forward). */
export const RESTRICTED_FORWARD_HEADERS: ReadonlySet<string> = new Set([
  'Host', 'Connection', 'Keep-Alive', 'Te', 'Trailer', 'Upgrade', 'Http2-Settings', 'Proxy-Authorization',
  'Proxy-Authenticate', 'Proxy-Connection', 'Transfer-Encoding', 'Content-Length', 'Forwarded',
  'X-Forwarded-For', 'X-Forwarded-Host', 'X-Forwarded-Proto', 'X-Real-Ip',
]);

export interface OidcOptions {
  issuer: string | undefined;
  audience: string | undefined;
  jwksUrl: string | undefined;
  introspectionUrl: string | undefined;
  clientId: string | undefined;
  /** Never persisted (see buildRunConfig). */
  clientSecret: string | undefined;
  scopes: string[];
  insecureAllowHttp: boolean;
}

export interface RemoteAuthOptions {
  /** `--remote-auth`; `thv run` detects authentication itself and does not consult it (spec §7.1). */
  enabled: boolean;
  clientId: string | undefined;
  /** Never persisted. */
  clientSecret: string | undefined;
  clientSecretFile: string | undefined;
  scopes: string[];
  scopeParamName: string | undefined;
  skipBrowser: boolean;
  timeoutMs: number;
  callbackPort: number;
  issuer: string | undefined;
  authorizeUrl: string | undefined;
  tokenUrl: string | undefined;
  resource: string | undefined;
  /** Never persisted. */
  bearerToken: string | undefined;
  bearerTokenFile: string | undefined;
}

export interface TokenExchangeOptions {
  url: string | undefined;
  clientId: string | undefined;
  /** Never persisted. */
  clientSecret: string | undefined;
  clientSecretFile: string | undefined;
  audience: string | undefined;
  scopes: string[];
  subjectTokenType: string | undefined;
  headerName: string | undefined;
}

export interface OtelOptions {
  endpoint: string | undefined;
  headers: Record<string, string>;
  insecure: boolean;
  serviceName: string | undefined;
  tracingEnabled: boolean;
  metricsEnabled: boolean;
  samplingRate: number;
  /** Names from every `--otel-env-vars`, comma-split and trimmed. */
  envVars: string[];
  customAttributes: Record<string, string>;
  enablePrometheusMetricsPath: boolean;
  useLegacyAttributes: boolean;
}

export interface RunOptions {
  /** Undefined: resolved later (registry entry, then the default for the runtime and argument). */
  transport: TransportType | undefined;
  proxyMode: ProxyMode;
  /** IPv4 literal or hostname; resolve a hostname with `resolveHostToIPv4` before binding. */
  host: string;
  /** 0 = pick a free port at start. */
  proxyPort: number;
  /** 0 = registry value or a free port. */
  targetPort: number;
  targetHost: string;
  publish: string[];

  name: string | undefined;
  group: string;
  foreground: boolean;
  fromConfig: string | undefined;
  runtime: RuntimeOption;
  stdioSessions: StdioSessionMode;
  maxSessions: number;
  /** Valid labels; invalid ones were dropped with a warning. */
  labels: Record<string, string>;
  debug: boolean;

  /** `--env` pairs in order (later wins for the same key). */
  env: Record<string, string>;
  envFile: string | undefined;
  envFileDir: string | undefined;
  secrets: string[];
  volumes: string[];
  permissionProfile: string | undefined;
  network: string | undefined;
  isolateNetwork: boolean;
  /** `--isolate-network` given explicitly (true or false). */
  isolateNetworkExplicit: boolean;
  allowDockerGateway: boolean;
  ignoreGlobally: boolean;
  printResolvedOverlays: boolean;

  tools: string[];
  toolsOverride: string | undefined;

  imageVerification: ImageVerificationMode;
  caCert: string | undefined;
  runtimeImage: string | undefined;
  runtimeAddPackages: string[];
  buildWith: string[];
  k8sPodPatch: string | undefined;

  oidc: OidcOptions;
  resourceUrl: string | undefined;
  thvCaBundle: string | undefined;
  jwksAuthTokenFile: string | undefined;
  jwksAllowPrivateIp: boolean;

  authzConfig: string | undefined;
  auditConfig: string | undefined;
  enableAudit: boolean;
  webhookConfigs: string[];

  trustProxyHeaders: boolean;
  /** Starts with "/" when set. */
  endpointPrefix: string | undefined;
  stateless: boolean;
  strictProtocolValidation: boolean;
  /** Canonical origins (lower-case scheme and host, no trailing slash). */
  allowedOrigins: string[];
  /** The Go duration string as persisted in `session_ttl` (`formatDuration` form), undefined for the default. */
  sessionTtl: string | undefined;
  /** Effective session TTL in milliseconds (2h when unset or 0). */
  sessionTtlMs: number;

  remoteAuth: RemoteAuthOptions;
  /** `--remote-forward-headers`: header name → value (plaintext, persisted). */
  remoteForwardHeaders: Record<string, string>;
  /** `--remote-forward-headers-secret`: header name → secret name. */
  remoteForwardHeadersSecret: Record<string, string>;
  tokenExchange: TokenExchangeOptions;
  otel: OtelOptions;

  /** Long names (without dashes) of the flags given on the command line. */
  explicitFlags: string[];
}

export interface ParsedRunOptions {
  options: RunOptions;
  /** Things the user should hear about that do not stop the run (deprecations, ignored values). */
  warnings: string[];
}

// ---------------------------------------------------------------------------------------------------
// Go durations

const DURATION_UNITS_NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5
  'μs': 1_000n, // U+03BC
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const MAX_DURATION_NS = (1n << 63n) - 1n;

function durationError(s: string, why: string): Error {
  return new Error(`time: ${why} ${JSON.stringify(s)}`);
}

/** Go's `time.ParseDuration`, in nanoseconds. Throws an Error with Go's wording. */
export function parseDurationNs(s: string): bigint {
  const orig = s;
  let rest = s;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') throw durationError(orig, 'invalid duration');
  let total = 0n;
  while (rest !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(rest) as RegExpExecArray;
    const intPart = m[1] ?? '';
    const fracPart = m[2];
    if (intPart === '' && (fracPart === undefined || fracPart === '')) {
      throw durationError(orig, 'invalid duration');
    }
    rest = rest.slice(m[0].length);
    const unitMatch = /^[^\d.]*/.exec(rest) as RegExpExecArray;
    const unit = unitMatch[0];
    if (unit === '') throw durationError(orig, 'missing unit in duration');
    const scale = DURATION_UNITS_NS[unit];
    if (scale === undefined) {
      throw new Error(`time: unknown unit ${JSON.stringify(unit)} in duration ${JSON.stringify(orig)}`);
    }
    rest = rest.slice(unit.length);
    let value = BigInt(intPart === '' ? '0' : intPart) * scale;
    if (fracPart !== undefined && fracPart !== '') {
      // Truncate like Go: fraction * scale / 10^digits.
      value += (BigInt(fracPart) * scale) / 10n ** BigInt(fracPart.length);
    }
    total += value;
    if (total > MAX_DURATION_NS) throw durationError(orig, 'invalid duration');
  }
  return negative ? -total : total;
}

/** Go's `time.ParseDuration`, in milliseconds (may be fractional below 1 ms). */
export function parseDuration(s: string): number {
  return Number(parseDurationNs(s)) / 1e6;
}

function formatFraction(value: bigint, digits: number): string {
  const unit = 10n ** BigInt(digits);
  const whole = value / unit;
  let frac = (value % unit).toString().padStart(digits, '0').replace(/0+$/, '');
  return frac === '' ? whole.toString() : `${whole}.${frac}`;
}

/** Go's `time.Duration.String` for a nanosecond count: `2h0m0s`, `1m30s`, `1.5s`, `250ms`, `0s`. */
export function formatDurationNs(ns: bigint): string {
  if (ns === 0n) return '0s';
  const sign = ns < 0n ? '-' : '';
  const u = ns < 0n ? -ns : ns;
  if (u < 1_000n) return `${sign}${u}ns`;
  if (u < 1_000_000n) return `${sign}${formatFraction(u, 3)}µs`;
  if (u < 1_000_000_000n) return `${sign}${formatFraction(u, 6)}ms`;
  const hours = u / 3_600_000_000_000n;
  const minutes = (u / 60_000_000_000n) % 60n;
  const secondsNs = u % 60_000_000_000n;
  let out = sign;
  if (hours > 0n) out += `${hours}h`;
  if (hours > 0n || minutes > 0n) out += `${minutes}m`;
  out += `${formatFraction(secondsNs, 9)}s`;
  return out;
}

/** Go's `time.Duration.String` for a duration in milliseconds: `formatDuration(7_200_000)` → `2h0m0s`. */
export function formatDuration(ms: number): string {
  return formatDurationNs(BigInt(Math.round(ms * 1e6)));
}

// ---------------------------------------------------------------------------------------------------
// Small validators (return an error text, or undefined when fine)

const HOSTNAME_PATTERN = /^(?=.{1,253}$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

function quote(value: unknown): string {
  return JSON.stringify(value);
}

function parsePort(value: string, min = 0, max = 65535): number | string {
  if (!/^[+-]?\d+$/.test(value.trim())) return `expected a port number between ${min} and ${max}, got ${quote(value)}`;
  const n = Number(value.trim());
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    return `expected a port number between ${min} and ${max}, got ${quote(value)}`;
  }
  return n;
}

function httpUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `expected an http:// or https:// URL, got ${quote(value)}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `expected an http:// or https:// URL, got ${quote(value)}`;
  }
  if (url.hostname === '') return `URL has no host: ${quote(value)}`;
  return undefined;
}

function isLocalhostHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * ToolHive's `ValidateEndpointURL`: a valid http(s) URL that uses HTTPS unless it points at localhost;
 * `INSECURE_DISABLE_URL_VALIDATION=true` (or, our addition, `--oidc-insecure-allow-http`) lifts the HTTPS rule.
 */
function endpointUrlProblem(value: string, allowHttp: boolean): string | undefined {
  const problem = httpUrlProblem(value);
  if (problem !== undefined) return problem;
  const url = new URL(value);
  if (url.protocol !== 'https:' && !allowHttp && !isLocalhostHost(url.hostname)) {
    return `endpoint must use HTTPS: ${value}`;
  }
  return undefined;
}

/** RFC 8707 resource indicator (ToolHive's `ValidateResourceURI`): a scheme, a host, no fragment. */
function resourceUriProblem(value: string): string | undefined {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):(\/\/([^/?#]*))?[^#]*(#.*)?$/.exec(value);
  if (m === null) return `invalid resource URI: ${quote(value)}`;
  if (m[3] === undefined || m[3] === '') return `resource URI must include a host: ${value}`;
  if (m[4] !== undefined && m[4] !== '#') return `resource URI must not contain fragments (#): ${value}`;
  return undefined;
}

/** An Origin header value, canonicalised, or an error text. */
function canonicalOrigin(value: string): { origin: string } | { error: string } {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(\[[0-9A-Fa-f:.]+\]|[^\s/:?#@[\]]+)(?::(\d{1,5}))?\/?$/.exec(value);
  const bad = {
    error: `expected an origin scheme://host[:port] without path, query or credentials, got ${quote(value)}`,
  };
  if (m === null) return bad;
  const scheme = (m[1] as string).toLowerCase();
  const host = (m[2] as string).toLowerCase();
  if (host.startsWith('[') && !isIPv6(host.slice(1, -1))) return bad;
  const port = m[3];
  if (port !== undefined && Number(port) > 65535) return bad;
  return { origin: port === undefined ? `${scheme}://${host}` : `${scheme}://${host}:${port}` };
}

/** Kubernetes-style label key/value (ToolHive `labels.ParseLabel`). */
function labelProblem(key: string, value: string): string | undefined {
  const name = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
  const slash = key.lastIndexOf('/');
  const prefix = slash === -1 ? undefined : key.slice(0, slash);
  const local = slash === -1 ? key : key.slice(slash + 1);
  if (local === '' || local.length > 63 || !name.test(local)) {
    return 'the key name must be 1-63 characters of letters, digits, "-", "_" or "." and start and end with a letter or digit';
  }
  if (prefix !== undefined && (prefix.length > 253 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(prefix))) {
    return 'the key prefix must be a DNS subdomain';
  }
  if (value.length > 63 || (value !== '' && !name.test(value))) {
    return 'the value must be at most 63 characters of letters, digits, "-", "_" or "." and start and end with a letter or digit';
  }
  return undefined;
}

const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Go's `http.CanonicalHeaderKey`. */
export function canonicalHeaderKey(name: string): string {
  if (!HEADER_TOKEN.test(name)) return name;
  return name
    .split('-')
    .map((part) => (part === '' ? part : part[0]!.toUpperCase() + part.slice(1).toLowerCase()))
    .join('-');
}

function headerEntry(entry: string, secret: boolean): { name: string; value: string } | { error: string } {
  const idx = entry.indexOf('=');
  if (idx === -1) return { error: `invalid header format ${quote(entry)}: expected Name=${secret ? 'secret-name' : 'Value'}` };
  const name = entry.slice(0, idx).trim();
  const value = entry.slice(idx + 1);
  if (name === '' || !HEADER_TOKEN.test(name)) return { error: `invalid header name in ${quote(entry)}` };
  if (RESTRICTED_FORWARD_HEADERS.has(canonicalHeaderKey(name))) {
    return { error: `header ${quote(name)} is restricted and cannot be configured for forwarding` };
  }
  // eslint-disable-next-line no-control-regex
  if (value !== '' && (value.length > 8192 || /[\x00-\x08\x0a-\x1f\x7f]/.test(value))) {
    return { error: `invalid header value in ${quote(entry)}: contains control characters or exceeds 8192 bytes` };
  }
  if (secret && value === '') return { error: `invalid secret header ${quote(entry)}: secret name cannot be empty` };
  return { name, value };
}

/** Group names: lowercase letters, digits, `_`, `-` and single spaces, no leading/trailing space. */
function groupProblem(group: string): string | undefined {
  if (group === '') return 'group name cannot be empty';
  if (!/^[a-z0-9_-]+( [a-z0-9_-]+)*$/.test(group)) {
    return `group name must use lowercase letters, digits, "_", "-" and single spaces, without leading or trailing spaces, got ${quote(group)}`;
  }
  return undefined;
}

/** `hostPort:containerPort`, `ip:hostPort:containerPort` or `containerPort`, each optionally `/tcp|/udp`. */
function publishProblem(entry: string): string | undefined {
  const spec = entry.replace(/\/(tcp|udp|sctp)$/i, '');
  const parts = spec.startsWith('[') ? spec.split(/(?<=\]):/) : spec.split(':');
  const ports = parts.length === 3 ? parts.slice(1) : parts;
  if (parts.length > 3 || ports.length === 0) return `expected hostPort:containerPort or containerPort, got ${quote(entry)}`;
  for (const [i, p] of ports.entries()) {
    const optionalHost = ports.length === 2 && i === 0 && p === '';
    if (optionalHost) continue;
    if (!/^\d{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65535) {
      return `expected hostPort:containerPort or containerPort with ports 1-65535, got ${quote(entry)}`;
    }
  }
  return undefined;
}

/** Characters a mount declaration may not contain (spec §4.6). */
function volumeProblem(entry: string): string | undefined {
  if (entry.trim() === '' || entry === ':ro') return `expected host-path:container-path[:ro], got ${quote(entry)}`;
  // eslint-disable-next-line no-control-regex
  if (/[$&;|`\x00]/.test(entry)) return `volume ${quote(entry)} contains a forbidden character ($ & ; | \` or NUL)`;
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// The schema

/** Result of checking one flag: a value, or problems (each already prefixed with the flag). */
type Checked<T> = { ok: true; value: T } | { ok: false; problems: string[] };

function ok<T>(value: T): Checked<T> {
  return { ok: true, value };
}

function fail(flag: string, ...problems: string[]): Checked<never> {
  return { ok: false, problems: problems.map((p) => `--${flag}: ${p}`) };
}

/**
 * One flag. The zod field accepts whatever commander produced and turns it into a `Checked` result
 * instead of failing, so the object-level step below sees every field and can report all problems
 * together with the cross-flag ones.
 */
function flag<T>(name: string, check: (value: unknown, name: string) => Checked<T>) {
  return z.unknown().optional().transform((value): Checked<T> => check(value, name));
}

function asString(value: unknown, name: string): Checked<string | undefined> {
  if (value === undefined || value === null) return ok(undefined);
  if (typeof value === 'string') return ok(value);
  if (typeof value === 'number' || typeof value === 'bigint') return ok(String(value));
  return fail(name, `expected a single value, got ${quote(value)}`);
}

/** A string flag; `''` counts as not given (like an empty Go string flag). */
const str = (name: string) =>
  flag(name, (v, n) => {
    const r = asString(v, n);
    return r.ok && r.value === '' ? ok(undefined) : r;
  });

const bool = (name: string, fallback: boolean) =>
  flag(name, (v, n): Checked<boolean> => {
    if (v === undefined || v === null) return ok(fallback);
    if (typeof v === 'boolean') return ok(v);
    if (typeof v === 'string' && /^(true|false)$/i.test(v)) return ok(v.toLowerCase() === 'true');
    return fail(n, `expected true or false, got ${quote(v)}`);
  });

const strArray = (name: string) =>
  flag(name, (v, n): Checked<string[]> => {
    if (v === undefined || v === null) return ok([]);
    const list = Array.isArray(v) ? v : [v];
    if (!list.every((x) => typeof x === 'string')) return fail(n, `expected text values, got ${quote(v)}`);
    return ok(list as string[]);
  });

/** Comma slice: arrays are flattened and every element split on commas. */
const slice = (name: string) =>
  flag(name, (v, n): Checked<string[] | undefined> => {
    if (v === undefined || v === null) return ok(undefined);
    const list = Array.isArray(v) ? v : [v];
    if (!list.every((x) => typeof x === 'string')) return fail(n, `expected text values, got ${quote(v)}`);
    return ok(
      (list as string[])
        .flatMap((s) => s.split(','))
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    );
  });

function oneOf<T extends string>(values: readonly T[], opts: { caseInsensitive?: boolean } = {}) {
  return (v: unknown, n: string): Checked<T | undefined> => {
    const r = asString(v, n);
    if (!r.ok) return r;
    if (r.value === undefined || r.value === '') return ok(undefined);
    const candidate = opts.caseInsensitive === true ? r.value.toLowerCase() : r.value;
    if ((values as readonly string[]).includes(candidate)) return ok(candidate as T);
    return fail(n, `expected one of ${values.join(', ')}, got ${quote(r.value)}`);
  };
}

const port = (name: string, min = 0, max = 65535) =>
  flag(name, (v, n): Checked<number | undefined> => {
    if (v === undefined || v === null || v === '') return ok(undefined);
    const r = typeof v === 'number' ? String(v) : v;
    if (typeof r !== 'string') return fail(n, `expected a port number, got ${quote(v)}`);
    const p = parsePort(r, min, max);
    return typeof p === 'string' ? fail(n, p) : ok(p);
  });

const url = (name: string) =>
  flag(name, (v, n): Checked<string | undefined> => {
    const r = asString(v, n);
    if (!r.ok || r.value === undefined || r.value === '') return r.ok ? ok(undefined) : r;
    const problem = httpUrlProblem(r.value);
    return problem === undefined ? ok(r.value) : fail(n, problem);
  });

const duration = (name: string) =>
  flag(name, (v, n): Checked<{ text: string; ns: bigint } | undefined> => {
    const r = asString(v, n);
    if (!r.ok) return r;
    if (r.value === undefined || r.value === '') return ok(undefined);
    try {
      return ok({ text: r.value, ns: parseDurationNs(r.value.trim()) });
    } catch {
      return fail(n, `expected a duration such as 30s, 5m or 1h30m, got ${quote(r.value)}`);
    }
  });

/**
 * The raw shape produced by `addRunFlags` (commander attribute names). Each field yields a `Checked` value;
 * the pipeline that follows assembles `RunOptions`.
 */
const RawRunFlagsSchema = z.object({
  transport: flag('transport', oneOf(TRANSPORTS, { caseInsensitive: true })),
  proxyMode: flag('proxy-mode', oneOf(PROXY_MODES, { caseInsensitive: true })),
  host: flag('host', (v, n): Checked<string | undefined> => {
    const r = asString(v, n);
    if (!r.ok || r.value === undefined || r.value === '') return r.ok ? ok(undefined) : r;
    const host = r.value.trim();
    if (isIPv4(host)) return ok(host);
    if (isIPv6(host) || isIPv6(host.replace(/^\[|\]$/g, ''))) return fail(n, `IPv6 addresses are not supported: ${host}`);
    if (HOSTNAME_PATTERN.test(host)) return ok(host);
    return fail(n, `expected an IPv4 address or a hostname, got ${quote(r.value)}`);
  }),
  proxyPort: port('proxy-port'),
  targetPort: port('target-port'),
  targetHost: flag('target-host', (v, n): Checked<string | undefined> => {
    const r = asString(v, n);
    if (!r.ok || r.value === undefined || r.value === '') return r.ok ? ok(undefined) : r;
    if (/[\s/?#@]/.test(r.value)) return fail(n, `expected a hostname or IP address, got ${quote(r.value)}`);
    return ok(r.value);
  }),
  publish: flag('publish', (v, n) => {
    const r = strArray(n).parse(v);
    if (!r.ok) return r;
    const problems = r.value.map(publishProblem).filter((p): p is string => p !== undefined);
    return problems.length > 0 ? fail(n, ...problems) : r;
  }),

  name: str('name'),
  group: flag('group', (v, n): Checked<string | undefined> => {
    const r = asString(v, n);
    if (!r.ok || r.value === undefined) return r;
    const problem = groupProblem(r.value);
    return problem === undefined ? ok(r.value) : fail(n, problem);
  }),
  foreground: bool('foreground', false),
  fromConfig: str('from-config'),
  runtime: flag('runtime', oneOf(RUNTIME_OPTIONS, { caseInsensitive: true })),
  stdioSessions: flag('stdio-sessions', oneOf(STDIO_SESSION_MODES, { caseInsensitive: true })),
  maxSessions: flag('max-sessions', (v, n): Checked<number | undefined> => {
    if (v === undefined || v === null || v === '') return ok(undefined);
    const s = typeof v === 'number' ? String(v) : v;
    if (typeof s !== 'string' || !/^\d+$/.test(s.trim()) || Number(s) < 1 || Number(s) > MAX_MAX_SESSIONS) {
      return fail(n, `expected a whole number from 1 to ${MAX_MAX_SESSIONS}, got ${quote(v)}`);
    }
    return ok(Number(s));
  }),
  label: strArray('label'),
  debug: bool('debug', false),

  env: flag('env', (v, n): Checked<Record<string, string>> => {
    const r = strArray(n).parse(v);
    if (!r.ok) return r;
    const env: Record<string, string> = {};
    const problems: string[] = [];
    for (const entry of r.value) {
      const idx = entry.indexOf('=');
      if (idx <= 0) {
        problems.push(`expected KEY=VALUE, got ${quote(entry)}`);
        continue;
      }
      env[entry.slice(0, idx)] = entry.slice(idx + 1);
    }
    return problems.length > 0 ? fail(n, ...problems) : ok(env);
  }),
  envFile: str('env-file'),
  envFileDir: str('env-file-dir'),
  secret: flag('secret', (v, n) => {
    const r = strArray(n).parse(v);
    if (!r.ok) return r;
    const problems = r.value
      .filter((s) => !/^([^,]+),target=(.+)$/s.test(s))
      .map((s) => `expected NAME,target=ENV_VAR, got ${quote(s)}`);
    return problems.length > 0 ? fail(n, ...problems) : r;
  }),
  volume: flag('volume', (v, n) => {
    const r = strArray(n).parse(v);
    if (!r.ok) return r;
    const problems = r.value.map(volumeProblem).filter((p): p is string => p !== undefined);
    return problems.length > 0 ? fail(n, ...problems) : r;
  }),
  permissionProfile: str('permission-profile'),
  network: str('network'),
  isolateNetwork: flag('isolate-network', (v, n) => {
    const r = bool(n, true).parse(v);
    return r.ok ? ok({ value: r.value, explicit: v !== undefined && v !== null }) : r;
  }),
  allowDockerGateway: bool('allow-docker-gateway', false),
  ignoreGlobally: bool('ignore-globally', true),
  printResolvedOverlays: bool('print-resolved-overlays', false),

  tools: flag('tools', (v, n) => {
    const r = strArray(n).parse(v);
    if (!r.ok) return r;
    return r.value.some((t) => t.trim() === '') ? fail(n, 'tool names cannot be empty') : r;
  }),
  toolsOverride: str('tools-override'),

  imageVerification: flag('image-verification', oneOf(IMAGE_VERIFICATION_MODES)),
  caCert: str('ca-cert'),
  runtimeImage: str('runtime-image'),
  runtimeAddPackage: flag('runtime-add-package', (v, n) => {
    const r = strArray(n).parse(v);
    if (!r.ok) return r;
    const problems = r.value
      .filter((p) => !/^[a-zA-Z0-9][a-zA-Z0-9._+-]*$/.test(p) || p.length > 128)
      .map((p) => `invalid package name ${quote(p)}`);
    return problems.length > 0 ? fail(n, ...problems) : r;
  }),
  buildWith: flag('build-with', (v, n) => {
    const r = strArray(n).parse(v);
    if (!r.ok) return r;
    const problems = r.value
      .filter((p) => !/^[A-Za-z0-9][A-Za-z0-9._+[\],<>=!~* -]*$/.test(p) || p.length > 128)
      .map((p) => `invalid requirement ${quote(p)}`);
    return problems.length > 0 ? fail(n, ...problems) : r;
  }),
  k8sPodPatch: str('k8s-pod-patch'),

  oidcIssuer: url('oidc-issuer'),
  oidcAudience: str('oidc-audience'),
  oidcJwksUrl: str('oidc-jwks-url'),
  oidcIntrospectionUrl: str('oidc-introspection-url'),
  oidcClientId: str('oidc-client-id'),
  oidcClientSecret: str('oidc-client-secret'),
  oidcScopes: slice('oidc-scopes'),
  oidcInsecureAllowHttp: bool('oidc-insecure-allow-http', false),
  resourceUrl: url('resource-url'),
  thvCaBundle: str('thv-ca-bundle'),
  jwksAuthTokenFile: str('jwks-auth-token-file'),
  jwksAllowPrivateIp: bool('jwks-allow-private-ip', false),

  authzConfig: str('authz-config'),
  auditConfig: str('audit-config'),
  enableAudit: bool('enable-audit', false),
  webhookConfig: strArray('webhook-config'),

  trustProxyHeaders: bool('trust-proxy-headers', false),
  endpointPrefix: flag('endpoint-prefix', (v, n): Checked<string | undefined> => {
    const r = asString(v, n);
    if (!r.ok || r.value === undefined || r.value === '') return r.ok ? ok(undefined) : r;
    return r.value.startsWith('/') ? ok(r.value) : fail(n, `must start with "/", got ${quote(r.value)}`);
  }),
  stateless: bool('stateless', false),
  sessionTtl: flag('session-ttl', (v, n) => {
    const r = duration(n).parse(v);
    if (!r.ok || r.value === undefined) return r;
    return r.value.ns < 0n ? fail(n, `must not be negative, got ${quote(r.value.text)}`) : r;
  }),
  strictProtocolValidation: bool('strict-protocol-validation', false),
  allowedOrigins: flag('allowed-origins', (v, n): Checked<string[]> => {
    const r = strArray(n).parse(v);
    if (!r.ok) return r;
    const origins: string[] = [];
    const problems: string[] = [];
    for (const entry of r.value) {
      const c = canonicalOrigin(entry.trim());
      if ('error' in c) problems.push(c.error);
      else if (!origins.includes(c.origin)) origins.push(c.origin);
    }
    return problems.length > 0 ? fail(n, ...problems) : ok(origins);
  }),

  remoteAuth: bool('remote-auth', false),
  remoteAuthClientId: str('remote-auth-client-id'),
  remoteAuthClientSecret: str('remote-auth-client-secret'),
  remoteAuthClientSecretFile: str('remote-auth-client-secret-file'),
  remoteAuthScopes: slice('remote-auth-scopes'),
  remoteAuthScopeParamName: str('remote-auth-scope-param-name'),
  remoteAuthSkipBrowser: bool('remote-auth-skip-browser', false),
  remoteAuthTimeout: flag('remote-auth-timeout', (v, n) => {
    const r = duration(n).parse(v);
    if (!r.ok || r.value === undefined) return r;
    return r.value.ns <= 0n ? fail(n, `must be positive, got ${quote(r.value.text)}`) : r;
  }),
  remoteAuthCallbackPort: port('remote-auth-callback-port', 1024, 65535),
  remoteAuthIssuer: url('remote-auth-issuer'),
  remoteAuthAuthorizeUrl: url('remote-auth-authorize-url'),
  remoteAuthTokenUrl: url('remote-auth-token-url'),
  remoteAuthResource: flag('remote-auth-resource', (v, n): Checked<string | undefined> => {
    const r = asString(v, n);
    if (!r.ok || r.value === undefined || r.value === '') return r.ok ? ok(undefined) : r;
    const problem = resourceUriProblem(r.value);
    return problem === undefined ? ok(r.value) : fail(n, problem);
  }),
  remoteAuthBearerToken: str('remote-auth-bearer-token'),
  remoteAuthBearerTokenFile: str('remote-auth-bearer-token-file'),
  remoteForwardHeaders: flag('remote-forward-headers', (v, n): Checked<Record<string, string>> => {
    const r = strArray(n).parse(v);
    if (!r.ok) return r;
    const headers: Record<string, string> = {};
    const problems: string[] = [];
    for (const entry of r.value) {
      const h = headerEntry(entry, false);
      if ('error' in h) problems.push(h.error);
      else headers[h.name] = h.value;
    }
    return problems.length > 0 ? fail(n, ...problems) : ok(headers);
  }),
  remoteForwardHeadersSecret: flag('remote-forward-headers-secret', (v, n): Checked<Record<string, string>> => {
    const r = strArray(n).parse(v);
    if (!r.ok) return r;
    const headers: Record<string, string> = {};
    const problems: string[] = [];
    for (const entry of r.value) {
      const h = headerEntry(entry, true);
      if ('error' in h) problems.push(h.error);
      else headers[h.name] = h.value;
    }
    return problems.length > 0 ? fail(n, ...problems) : ok(headers);
  }),

  tokenExchangeUrl: url('token-exchange-url'),
  tokenExchangeClientId: str('token-exchange-client-id'),
  tokenExchangeClientSecret: str('token-exchange-client-secret'),
  tokenExchangeClientSecretFile: str('token-exchange-client-secret-file'),
  tokenExchangeAudience: str('token-exchange-audience'),
  tokenExchangeScopes: slice('token-exchange-scopes'),
  tokenExchangeSubjectTokenType: flag('token-exchange-subject-token-type', (v, n): Checked<string | undefined> => {
    const r = asString(v, n);
    if (!r.ok || r.value === undefined || r.value === '') return r.ok ? ok(undefined) : r;
    if ((SUBJECT_TOKEN_TYPES as readonly string[]).includes(r.value)) return ok(r.value);
    if (/^urn:ietf:params:oauth:token-type:[A-Za-z0-9_.-]+$/.test(r.value)) return ok(r.value);
    return fail(n, `expected one of ${SUBJECT_TOKEN_TYPES.join(', ')} or a urn:ietf:params:oauth:token-type:* URN, got ${quote(r.value)}`);
  }),
  tokenExchangeHeaderName: flag('token-exchange-header-name', (v, n): Checked<string | undefined> => {
    const r = asString(v, n);
    if (!r.ok || r.value === undefined || r.value === '') return r.ok ? ok(undefined) : r;
    return HEADER_TOKEN.test(r.value) ? ok(r.value) : fail(n, `invalid header name ${quote(r.value)}`);
  }),

  otelEndpoint: flag('otel-endpoint', (v, n): Checked<string | undefined> => {
    const r = asString(v, n);
    if (!r.ok || r.value === undefined || r.value === '') return r.ok ? ok(undefined) : r;
    if (r.value.includes('://')) {
      const problem = httpUrlProblem(r.value);
      return problem === undefined ? ok(r.value) : fail(n, problem);
    }
    // ToolHive also accepts host[:port][/path] without a scheme (--otel-insecure picks http).
    return /^[A-Za-z0-9._-]+(:\d{1,5})?(\/\S*)?$/.test(r.value)
      ? ok(r.value)
      : fail(n, `expected a URL or host[:port], got ${quote(r.value)}`);
  }),
  otelHeaders: flag('otel-headers', (v, n): Checked<Record<string, string>> => {
    const r = strArray(n).parse(v);
    if (!r.ok) return r;
    const headers: Record<string, string> = {};
    const problems: string[] = [];
    for (const entry of r.value) {
      const idx = entry.indexOf('=');
      if (idx <= 0) problems.push(`expected key=value, got ${quote(entry)}`);
      else headers[entry.slice(0, idx)] = entry.slice(idx + 1);
    }
    return problems.length > 0 ? fail(n, ...problems) : ok(headers);
  }),
  otelInsecure: bool('otel-insecure', false),
  otelServiceName: str('otel-service-name'),
  otelTracingEnabled: bool('otel-tracing-enabled', true),
  otelMetricsEnabled: bool('otel-metrics-enabled', true),
  otelSamplingRate: flag('otel-sampling-rate', (v, n): Checked<number | undefined> => {
    if (v === undefined || v === null || v === '') return ok(undefined);
    const s = typeof v === 'number' ? String(v) : v;
    if (typeof s !== 'string' || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s.trim())) {
      return fail(n, `expected a number from 0.0 to 1.0, got ${quote(v)}`);
    }
    const rate = Number(s);
    return rate >= 0 && rate <= 1 ? ok(rate) : fail(n, `expected a number from 0.0 to 1.0, got ${quote(v)}`);
  }),
  otelEnvVars: flag('otel-env-vars', (v, n): Checked<string[]> => {
    const r = strArray(n).parse(v);
    if (!r.ok) return r;
    const names = r.value.flatMap((e) => e.split(',')).map((s) => s.trim()).filter((s) => s !== '');
    const bad = names.filter((s) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(s));
    return bad.length > 0 ? fail(n, ...bad.map((s) => `invalid environment variable name ${quote(s)}`)) : ok(names);
  }),
  otelCustomAttributes: flag('otel-custom-attributes', (v, n): Checked<Record<string, string>> => {
    const r = asString(v, n);
    if (!r.ok) return r;
    const attrs: Record<string, string> = {};
    if (r.value === undefined || r.value.trim() === '') return ok(attrs);
    const problems: string[] = [];
    for (const pair of r.value.split(',')) {
      const idx = pair.indexOf('=');
      const key = idx === -1 ? '' : pair.slice(0, idx).trim();
      if (key === '') problems.push(`expected key=value pairs separated by commas, got ${quote(pair.trim())}`);
      else attrs[key] = pair.slice(idx + 1).trim();
    }
    return problems.length > 0 ? fail(n, ...problems) : ok(attrs);
  }),
  otelEnablePrometheusMetricsPath: bool('otel-enable-prometheus-metrics-path', false),
  otelUseLegacyAttributes: bool('otel-use-legacy-attributes', true),
});

type RawFields = z.infer<typeof RawRunFlagsSchema>;
type Values = { [K in keyof RawFields]: RawFields[K] extends Checked<infer T> ? T : never };

/** The schema's context: the environment (THV_RUNTIME, INSECURE_DISABLE_URL_VALIDATION) and the raw input. */
interface SchemaContext {
  env: NodeJS.ProcessEnv;
  raw: Record<string, unknown>;
}

function assemble(values: Values, context: SchemaContext): { options?: RunOptions; problems: string[]; warnings: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  const raw = context.raw;
  const explicitFlags = Object.keys(raw)
    .filter((k) => k in RawRunFlagsSchema.shape && raw[k] !== undefined)
    .map(attributeFlagName);
  const given = (flag: string) => explicitFlags.includes(flag);

  // --runtime: flag, else $THV_RUNTIME, else auto.
  let runtime: RuntimeOption = values.runtime ?? 'auto';
  if (values.runtime === undefined) {
    const fromEnv = context.env['THV_RUNTIME']?.trim().toLowerCase();
    if (fromEnv !== undefined && fromEnv !== '') {
      if ((RUNTIME_OPTIONS as readonly string[]).includes(fromEnv)) runtime = fromEnv as RuntimeOption;
      else problems.push(`THV_RUNTIME: expected one of ${RUNTIME_OPTIONS.join(', ')}, got ${quote(context.env['THV_RUNTIME'])}`);
    }
  }

  // --from-config runs an exported RunConfig as is: nothing else may describe the workload.
  if (values.fromConfig !== undefined) {
    const conflicting = explicitFlags.filter((f) => !FROM_CONFIG_COMPATIBLE.has(f)).map((f) => `--${f}`);
    if (conflicting.length > 0) {
      problems.push(`--from-config cannot be used with other configuration flags: ${conflicting.join(', ')}`);
    }
  }

  // OIDC endpoint URLs must use HTTPS unless local (ToolHive's ValidateEndpointURL).
  const allowHttp =
    values.oidcInsecureAllowHttp || context.env['INSECURE_DISABLE_URL_VALIDATION']?.toLowerCase() === 'true';
  for (const [flagName, value] of [
    ['oidc-jwks-url', values.oidcJwksUrl],
    ['oidc-introspection-url', values.oidcIntrospectionUrl],
  ] as const) {
    if (value === undefined) continue;
    const problem = endpointUrlProblem(value, allowHttp);
    if (problem !== undefined) problems.push(`--${flagName}: ${problem}`);
  }

  if (values.remoteAuthIssuer !== undefined && (values.remoteAuthAuthorizeUrl !== undefined || values.remoteAuthTokenUrl !== undefined)) {
    problems.push('--remote-auth-issuer cannot be combined with --remote-auth-authorize-url or --remote-auth-token-url');
  }

  if (values.stateless && values.transport === 'stdio') {
    problems.push('--stateless requires the sse or streamable-http transport, not stdio');
  }

  // Deprecations and flags that cannot have an effect: warn, do not fail.
  if (given('proxy-mode') && values.proxyMode === 'sse') {
    warnings.push(
      "The 'sse' proxy mode is deprecated and will be removed in a future release. Please migrate to 'streamable-http' (the new default).",
    );
  }
  if (values.tokenExchangeUrl === undefined) {
    const unused = explicitFlags.filter((f) => f.startsWith('token-exchange-'));
    if (unused.length > 0) warnings.push(`${unused.map((f) => `--${f}`).join(', ')} ha${unused.length > 1 ? 've' : 's'} no effect without --token-exchange-url`);
  }
  if (values.tokenExchangeClientSecret !== undefined && values.tokenExchangeClientSecretFile !== undefined) {
    warnings.push('--token-exchange-client-secret is used; --token-exchange-client-secret-file is ignored');
  }
  if (values.remoteAuthClientSecret !== undefined && values.remoteAuthClientSecretFile !== undefined) {
    warnings.push('--remote-auth-client-secret is used; --remote-auth-client-secret-file is ignored');
  }
  if (values.remoteAuthBearerToken !== undefined && values.remoteAuthBearerTokenFile !== undefined) {
    warnings.push('--remote-auth-bearer-token is used; --remote-auth-bearer-token-file is ignored');
  }

  // Labels: invalid ones are skipped with a warning (ToolHive's WithLabels).
  const labels: Record<string, string> = {};
  for (const entry of values.label) {
    const idx = entry.indexOf('=');
    const key = idx === -1 ? entry : entry.slice(0, idx).trim();
    const value = idx === -1 ? '' : entry.slice(idx + 1).trim();
    const problem = idx === -1 ? 'expected key=value' : labelProblem(key, value);
    if (problem !== undefined) warnings.push(`Skipping invalid label ${quote(entry)}: ${problem}`);
    else labels[key] = value;
  }

  if (problems.length > 0) return { problems, warnings };

  const sessionTtlNs = values.sessionTtl?.ns ?? 0n;
  const options: RunOptions = {
    transport: values.transport,
    proxyMode: values.proxyMode ?? 'streamable-http',
    host: values.host ?? DEFAULT_HOST,
    proxyPort: values.proxyPort ?? 0,
    targetPort: values.targetPort ?? 0,
    targetHost: values.targetHost ?? DEFAULT_HOST,
    publish: values.publish,

    name: values.name,
    group: values.group ?? DEFAULT_GROUP,
    foreground: values.foreground,
    fromConfig: values.fromConfig,
    runtime,
    stdioSessions: values.stdioSessions ?? 'per-session',
    maxSessions: values.maxSessions ?? DEFAULT_MAX_SESSIONS,
    labels,
    debug: values.debug,

    env: values.env,
    envFile: values.envFile,
    envFileDir: values.envFileDir,
    secrets: values.secret,
    volumes: values.volume,
    permissionProfile: values.permissionProfile,
    network: values.network,
    isolateNetwork: values.isolateNetwork.value,
    isolateNetworkExplicit: values.isolateNetwork.explicit,
    allowDockerGateway: values.allowDockerGateway,
    ignoreGlobally: values.ignoreGlobally,
    printResolvedOverlays: values.printResolvedOverlays,

    tools: values.tools,
    toolsOverride: values.toolsOverride,

    imageVerification: values.imageVerification ?? 'warn',
    caCert: values.caCert,
    runtimeImage: values.runtimeImage,
    runtimeAddPackages: values.runtimeAddPackage,
    buildWith: values.buildWith,
    k8sPodPatch: values.k8sPodPatch,

    oidc: {
      issuer: values.oidcIssuer,
      audience: values.oidcAudience,
      jwksUrl: values.oidcJwksUrl,
      introspectionUrl: values.oidcIntrospectionUrl,
      clientId: values.oidcClientId,
      clientSecret: values.oidcClientSecret,
      scopes: values.oidcScopes ?? ['openid'],
      insecureAllowHttp: values.oidcInsecureAllowHttp,
    },
    resourceUrl: values.resourceUrl,
    thvCaBundle: values.thvCaBundle,
    jwksAuthTokenFile: values.jwksAuthTokenFile,
    jwksAllowPrivateIp: values.jwksAllowPrivateIp,

    authzConfig: values.authzConfig,
    auditConfig: values.auditConfig,
    enableAudit: values.enableAudit,
    webhookConfigs: values.webhookConfig,

    trustProxyHeaders: values.trustProxyHeaders,
    endpointPrefix: values.endpointPrefix,
    stateless: values.stateless,
    strictProtocolValidation: values.strictProtocolValidation,
    allowedOrigins: values.allowedOrigins,
    // ToolHive stores `ttl.String()` ("30m" → "30m0s"); 0 means "use the default" and is not stored.
    sessionTtl: sessionTtlNs === 0n ? undefined : formatDurationNs(sessionTtlNs),
    sessionTtlMs: sessionTtlNs === 0n ? DEFAULT_SESSION_TTL_MS : Number(sessionTtlNs) / 1e6,

    remoteAuth: {
      enabled: values.remoteAuth,
      clientId: values.remoteAuthClientId,
      clientSecret: values.remoteAuthClientSecret,
      clientSecretFile: values.remoteAuthClientSecretFile,
      scopes: values.remoteAuthScopes ?? [],
      scopeParamName: values.remoteAuthScopeParamName,
      skipBrowser: values.remoteAuthSkipBrowser,
      timeoutMs: values.remoteAuthTimeout === undefined ? DEFAULT_REMOTE_AUTH_TIMEOUT_MS : Number(values.remoteAuthTimeout.ns) / 1e6,
      callbackPort: values.remoteAuthCallbackPort ?? DEFAULT_REMOTE_AUTH_CALLBACK_PORT,
      issuer: values.remoteAuthIssuer,
      authorizeUrl: values.remoteAuthAuthorizeUrl,
      tokenUrl: values.remoteAuthTokenUrl,
      resource: values.remoteAuthResource,
      bearerToken: values.remoteAuthBearerToken,
      bearerTokenFile: values.remoteAuthBearerTokenFile,
    },
    remoteForwardHeaders: values.remoteForwardHeaders,
    remoteForwardHeadersSecret: values.remoteForwardHeadersSecret,
    tokenExchange: {
      url: values.tokenExchangeUrl,
      clientId: values.tokenExchangeClientId,
      clientSecret: values.tokenExchangeClientSecret,
      clientSecretFile: values.tokenExchangeClientSecretFile,
      audience: values.tokenExchangeAudience,
      scopes: values.tokenExchangeScopes ?? [],
      subjectTokenType: values.tokenExchangeSubjectTokenType,
      headerName: values.tokenExchangeHeaderName,
    },
    otel: {
      endpoint: values.otelEndpoint,
      headers: values.otelHeaders,
      insecure: values.otelInsecure,
      serviceName: values.otelServiceName,
      tracingEnabled: values.otelTracingEnabled,
      metricsEnabled: values.otelMetricsEnabled,
      samplingRate: values.otelSamplingRate ?? DEFAULT_OTEL_SAMPLING_RATE,
      envVars: values.otelEnvVars,
      customAttributes: values.otelCustomAttributes,
      enablePrometheusMetricsPath: values.otelEnablePrometheusMetricsPath,
      useLegacyAttributes: values.otelUseLegacyAttributes,
    },

    explicitFlags,
  };
  return { options, problems, warnings };
}

/**
 * The one schema for `thv run` flags: raw commander output in, `{ options, warnings }` out. Field problems and
 * cross-flag problems are all reported as issues of a single parse.
 */
export function runOptionsSchema(env: NodeJS.ProcessEnv = process.env) {
  let raw: Record<string, unknown> = {};
  return z
    .record(z.string(), z.unknown())
    .transform((input) => {
      raw = input;
      return input;
    })
    .pipe(RawRunFlagsSchema)
    .transform((fields, ctx): ParsedRunOptions => {
      const problems: string[] = [];
      const values: Record<string, unknown> = {};
      for (const [key, result] of Object.entries(fields) as Array<[string, Checked<unknown>]>) {
        if (result.ok) values[key] = result.value;
        else problems.push(...result.problems);
      }
      // Cross-flag checks need every field; run them on what parsed, with defaults for the rest.
      const partial = problems.length === 0 ? (values as Values) : withFallbacks(values);
      const assembled = assemble(partial, { env, raw });
      problems.push(...assembled.problems);
      for (const message of problems) ctx.addIssue({ code: 'custom', message });
      if (problems.length > 0 || assembled.options === undefined) return z.NEVER;
      return { options: assembled.options, warnings: assembled.warnings };
    });
}

/** For cross-flag checks when some fields failed: re-parse an empty input for the failed fields' defaults. */
function withFallbacks(values: Record<string, unknown>): Values {
  const defaults = RawRunFlagsSchema.parse({});
  const merged: Record<string, unknown> = {};
  for (const [key, result] of Object.entries(defaults) as Array<[string, Checked<unknown>]>) {
    merged[key] = key in values ? values[key] : result.ok ? result.value : undefined;
  }
  return merged as Values;
}

/** `RunOptionsSchema` validates with `process.env`; use `runOptionsSchema(env)` for another environment. */
export const RunOptionsSchema = runOptionsSchema();

/**
 * Validates the raw options of `thv run` (what `addRunFlags` collected, i.e. `cmd.opts()`). Throws
 * `ThvError(InvalidArgument)` listing every problem, one per line.
 */
export function parseRunOptions(raw: unknown, env: NodeJS.ProcessEnv = process.env): ParsedRunOptions {
  const input = raw === undefined || raw === null ? {} : raw;
  const result = runOptionsSchema(env).safeParse(input);
  if (result.success) return result.data;
  const messages = result.error.issues.map((issue) =>
    issue.code === 'invalid_type' && issue.path.length === 0 ? 'run options must be an object' : issue.message,
  );
  const message =
    messages.length === 1
      ? (messages[0] as string)
      : `${messages.length} problems with the flags:\n  ${messages.join('\n  ')}`;
  throw new ThvError(ErrorCodes.InvalidArgument, message);
}

/**
 * ToolHive's `ValidateAndNormaliseHostFlag`: an IPv4 literal is returned as is; a hostname is resolved and
 * its first IPv4 address returned; IPv6 is rejected.
 */
export async function resolveHostToIPv4(host: string): Promise<string> {
  if (isIPv4(host)) return host;
  if (isIPv6(host.replace(/^\[|\]$/g, ''))) {
    throw new ThvError(ErrorCodes.InvalidArgument, `--host: IPv6 addresses are not supported: ${host}`);
  }
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    throw new ThvError(ErrorCodes.InvalidArgument, `--host: invalid host: ${host}`);
  }
  const v4 = addresses.find((a) => a.family === 4);
  if (v4 === undefined) throw new ThvError(ErrorCodes.InvalidArgument, `--host: could not resolve host: ${host}`);
  return v4.address;
}
