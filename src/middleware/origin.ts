import { isIPv4, isIPv6 } from 'node:net';
import type { NamedMiddleware, ProxyContext } from './types.js';
import { sendRawJson } from '../transport/http-util.js';

/**
 * DNS-rebinding protection, as the MCP specification asks of Streamable HTTP servers ("Security
 * Warning", 2025-06-18 and 2025-11-25): validate `Origin`, and for a server bound to loopback also
 * validate `Host`.
 *
 * Origin: ToolHive's `origin` middleware (`pkg/transport/middleware/origin/origin.go`), same allow-list
 * resolution, same canonicalisation, same 403 body.
 *
 * Host: ToolHive has no such check; the MCP TypeScript SDK has (`hostHeaderValidation`,
 * `localhostHostValidation`). It closes the gap the Origin check leaves open: a page on a rebound
 * name that sends no `Origin` (a simple GET, say) still carries the attacker's name in `Host`.
 * Like the SDK, the check is on the host name only (any port), and a missing `Host` is refused.
 */

export interface OriginGuardOptions {
  /** Exact origins allowed (`--allowed-origins`). When absent, loopback binds get loopback defaults. */
  allowedOrigins?: string[];
  /** The address the proxy listens on (`--host`). */
  host: string;
  /** The port the proxy listens on (`--proxy-port`, resolved). */
  port: number;
  /**
   * Host names (any port) or `host:port` values (that port only) accepted in the `Host` header, in
   * addition to the loopback names when bound to loopback. For a non-loopback bind, giving this list
   * turns Host validation on. IPv6 literals may be written with or without brackets.
   */
  allowedHosts?: string[];
}

export const ORIGIN_STAGE = 'origin';

/** ToolHive's body, byte for byte. No `id`: the MCP schema types an error's id as string | number. */
const ORIGIN_NOT_ALLOWED = '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Origin not allowed"}}';
/** The SDK's code (-32000); like ToolHive's Origin body, no `id` (the SDK writes "id":null). */
const INVALID_HOST = '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Invalid Host header"}}';
const MISSING_HOST = '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Missing Host header"}}';
const DUPLICATE_HOST = '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Bad Request: more than one Host header"}}';

/** Host names a client of a loopback-bound server may use (plus any 127.0.0.0/8 dotted quad). */
const LOOPBACK_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'] as const;

/**
 * True for `localhost`, any 127.0.0.0/8 address and `::1` (bracketed or not), as ToolHive's
 * isLoopbackHost (Go's net.IP.IsLoopback, which also counts IPv4-mapped 127.x addresses).
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h === 'localhost') return true;
  const bare = h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
  if (isIPv4(bare)) return bare.startsWith('127.');
  if (isIPv6(bare)) {
    const canonical = new URL(`http://[${bare}]/`).hostname; // "[::1]", "[::ffff:7f00:1]"
    return canonical === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(canonical);
  }
  return false;
}

/**
 * The effective Origin allow-list, as ToolHive's ResolveAllowedOrigins: the explicit list when given;
 * else, for a loopback bind on a real port, `http://localhost:<port>`, `http://127.0.0.1:<port>`,
 * `http://[::1]:<port>`; else empty (no Origin validation).
 */
export function resolveAllowedOrigins(host: string, port: number, explicit?: readonly string[]): string[] {
  if (explicit !== undefined && explicit.length > 0) return [...explicit];
  if (!(port > 0) || !isLoopbackHost(host)) return [];
  return [`http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`];
}

/**
 * The WARN text the caller logs when Origin validation is off (non-loopback bind, no
 * `--allowed-origins`), or undefined when an allow-list applies.
 */
export function originGuardWarning(options: OriginGuardOptions): string | undefined {
  if (resolveAllowedOrigins(options.host, options.port, options.allowedOrigins).length > 0) return undefined;
  return (
    `Origin validation disabled: no allow-list configured for non-loopback bind ${options.host}:${options.port}; ` +
    'pass --allowed-origins=https://your-client.example to enable DNS-rebinding protection'
  );
}

/**
 * Canonical form of an Origin value for exact comparison, as ToolHive's CanonicalizeOrigin:
 * `scheme://host[:port]` with scheme and host lower-cased, IPv6 bracketed, the port kept as written
 * (`:80` and `:08080` are not normalised), path/query/fragment ignored. Returns undefined for a value
 * that can never match: userinfo, no scheme, no host, `null`, or anything that does not parse.
 * Stricter than Go's url.Parse in one respect: an unbracketed IPv6 literal is refused.
 */
export function canonicalizeOrigin(raw: string): string | undefined {
  const sep = raw.indexOf('://');
  if (sep <= 0) return undefined;
  const scheme = raw.slice(0, sep);
  if (!/^[A-Za-z][A-Za-z0-9+.-]*$/.test(scheme)) return undefined;
  const rest = raw.slice(sep + 3);
  let end = rest.length;
  for (let i = 0; i < rest.length; i++) {
    const c = rest.charCodeAt(i);
    if (c === 0x2f /* / */ || c === 0x3f /* ? */ || c === 0x23 /* # */) {
      end = i;
      break;
    }
  }
  const hp = splitHostPort(rest.slice(0, end), true);
  if (hp === undefined) return undefined;
  return hp.port === '' ? `${scheme.toLowerCase()}://${hp.hostname}` : `${scheme.toLowerCase()}://${hp.hostname}:${hp.port}`;
}

/**
 * Splits `host[:port]` (a Host header, an Origin's authority, an allowedHosts entry) into a lower-cased
 * host name (IPv6 bracketed and in canonical form) and the port as written ('' when absent or empty).
 * Undefined when malformed: userinfo, stray characters, a non-numeric port, an empty host.
 */
function splitHostPort(value: string, percentDecode: boolean): { hostname: string; port: string } | undefined {
  if (value === '' || value.includes('@')) return undefined;
  let hostname: string;
  let portPart: string;
  if (value.charCodeAt(0) === 0x5b /* [ */) {
    const close = value.indexOf(']');
    if (close < 0) return undefined;
    const inner = value.slice(1, close);
    if (!isIPv6(inner)) return undefined;
    hostname = new URL(`http://[${inner}]/`).hostname;
    portPart = value.slice(close + 1);
    if (portPart !== '' && portPart.charCodeAt(0) !== 0x3a /* : */) return undefined;
  } else {
    const colon = value.lastIndexOf(':');
    let name = colon < 0 ? value : value.slice(0, colon);
    portPart = colon < 0 ? '' : value.slice(colon);
    if (percentDecode && name.includes('%')) {
      try {
        name = decodeURIComponent(name);
      } catch {
        return undefined;
      }
    }
    // Letters, digits, '.', '-', '_', '~': what DNS names and IPv4 literals use. Go's url.Parse also
    // admits sub-delimiters (`*`, `!`, ...), which no browser puts in an Origin; refusing them only makes
    // such an entry match nothing, as a literal "*" entry matches nothing real in ToolHive.
    if (!/^[A-Za-z0-9._~-]+$/.test(name)) return undefined;
    hostname = name.toLowerCase();
  }
  const port = portPart === '' ? '' : portPart.slice(1);
  if (!/^[0-9]*$/.test(port)) return undefined;
  return { hostname, port };
}

function isLoopbackIPv4Name(hostname: string): boolean {
  return hostname.startsWith('127.') && isIPv4(hostname);
}

/**
 * Builds the stage, or returns undefined when neither check applies (non-loopback bind without
 * `allowedOrigins` and without `allowedHosts`); the caller then logs originGuardWarning().
 */
export function originGuard(options: OriginGuardOptions): NamedMiddleware | undefined {
  const loopback = isLoopbackHost(options.host);

  // Origin allow-list, canonicalised once. Entries that cannot be canonicalised match nothing.
  const allowedOrigins = new Set<string>();
  for (const o of resolveAllowedOrigins(options.host, options.port, options.allowedOrigins)) {
    const c = canonicalizeOrigin(o);
    if (c !== undefined) allowedOrigins.add(c);
  }
  const checkOrigin = allowedOrigins.size > 0 || (options.allowedOrigins !== undefined && options.allowedOrigins.length > 0);

  // Host allow-list: names for any port, name:port pairs for one port.
  const extraHosts = options.allowedHosts ?? [];
  const checkHost = loopback || extraHosts.length > 0;
  const hostNames = new Set<string>(loopback ? LOOPBACK_HOSTNAMES : []);
  const hostPorts = new Set<string>();
  for (const entry of extraHosts) {
    const trimmed = entry.trim();
    const hp = isIPv6(trimmed) ? { hostname: new URL(`http://[${trimmed}]/`).hostname, port: '' } : splitHostPort(trimmed, false);
    if (hp === undefined) throw new TypeError(`origin: invalid allowed host "${entry}"`);
    if (hp.port === '') hostNames.add(hp.hostname);
    else hostPorts.add(`${hp.hostname}:${hp.port}`);
  }
  // Exact Host header values accepted without parsing: every name bare and with the listening port.
  const fastHosts = new Set<string>(hostPorts);
  for (const name of hostNames) {
    fastHosts.add(name);
    if (options.port > 0) fastHosts.add(`${name}:${options.port}`);
  }

  if (!checkOrigin && !checkHost) return undefined;

  const hostAllowed = (value: string): boolean => {
    if (fastHosts.has(value)) return true;
    const hp = splitHostPort(value, false);
    if (hp === undefined) return false;
    if (hostNames.has(hp.hostname)) return true;
    if (loopback && isLoopbackIPv4Name(hp.hostname)) return true;
    return hp.port !== '' && hostPorts.has(`${hp.hostname}:${hp.port}`);
  };

  return {
    name: ORIGIN_STAGE,
    async handle(ctx, next) {
      const headers = ctx.req.headers;
      const origin = headers.origin;
      let originCount = 0;
      let hostCount = 0;
      if (checkHost || (checkOrigin && origin !== undefined)) {
        const raw = ctx.req.rawHeaders;
        for (let i = 0; i < raw.length; i += 2) {
          const n = raw[i]!;
          // Usual spellings first: toLowerCase allocates.
          if (n.length === 4) {
            if (n === 'Host' || n === 'host' || n.toLowerCase() === 'host') hostCount++;
          } else if (n.length === 6 && (n === 'Origin' || n === 'origin' || n.toLowerCase() === 'origin')) {
            originCount++;
          }
        }
      }
      if (checkOrigin) {
        // More than one Origin header: only a splitting / merging proxy produces that. Refused outright.
        if (originCount > 1) return forbid(ctx, ORIGIN_NOT_ALLOWED);
        // No Origin (or an empty one): a non-browser client. The spec asks for validation when present.
        if (origin !== undefined && origin !== '' && !originAllowed(allowedOrigins, origin)) return forbid(ctx, ORIGIN_NOT_ALLOWED);
      }
      if (checkHost) {
        if (hostCount > 1) return sendRawJson(ctx.res, 400, DUPLICATE_HOST);
        const host = headers.host;
        if (host === undefined || host === '') return forbid(ctx, MISSING_HOST);
        if (!hostAllowed(host)) return forbid(ctx, INVALID_HOST);
      }
      return next();
    },
  };
}

function originAllowed(set: Set<string>, origin: string): boolean {
  if (set.has(origin)) return true; // already canonical, the usual case for a browser
  const c = canonicalizeOrigin(origin);
  return c !== undefined && set.has(c);
}

function forbid(ctx: ProxyContext, body: string): void {
  sendRawJson(ctx.res, 403, body);
}
