/**
 * The client URL of a workload (spec §2.1: `/mcp` for Streamable HTTP, `/sse#<name>` for SSE) and the
 * readiness probe (spec §1.12): a real `initialize` POST (id `toolhive-init-check`), or a GET of the SSE
 * stream. A probe that opened a session closes it again, so it leaves no server process behind.
 */
import type { RunConfig } from '../config/run-config.js';

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export function mcpPath(config: Pick<RunConfig, 'transport' | 'proxy_mode'>): '/mcp' | '/sse' {
  if (config.transport === 'sse') return '/sse';
  if (config.transport === 'stdio' && config.proxy_mode === 'sse') return '/sse';
  return '/mcp';
}

/** The URL clients use; empty while no port is known. */
export function clientUrl(config: Pick<RunConfig, 'transport' | 'proxy_mode' | 'host' | 'port' | 'name'>): string {
  if (!config.port) return '';
  const path = mcpPath(config);
  const base = `http://${urlHost(config.host || '127.0.0.1')}:${config.port}${path}`;
  return path === '/sse' ? `${base}#${encodeURIComponent(config.name)}` : base;
}

/** Where the probe connects: a wildcard bind address is reached on loopback. */
function probeUrl(config: RunConfig): string {
  return `${proxyBaseUrl(config)}${mcpPath(config)}`;
}

export const PROBE_INITIALIZE = {
  jsonrpc: '2.0',
  method: 'initialize',
  id: 'toolhive-init-check',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'toolhive', version: '1.0' } },
};

/**
 * One probe. Ready = HTTP 200 carrying an initialize result (or, with inbound OIDC, 401/403: the proxy is
 * up and the server is behind the auth wall). Returns an explanation when not ready.
 */
export type ProbeResult = { ok: true } | { ok: false; reason: string; /** the server answered with a failure (5xx): retrying will not help */ fatal: boolean };

export async function probeOnce(config: RunConfig, timeoutMs = 10_000): Promise<ProbeResult> {
  const url = probeUrl(config);
  const authGuarded = config.oidc_config !== undefined && Object.keys(config.oidc_config).length > 0;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    if (mcpPath(config) === '/sse') {
      const controller = new AbortController();
      const res = await fetch(url, { headers: { accept: 'text/event-stream' }, signal: AbortSignal.any([signal, controller.signal]) });
      controller.abort();
      if (res.status === 200 || (authGuarded && (res.status === 401 || res.status === 403))) return { ok: true };
      return { ok: false, reason: `GET ${url} answered ${res.status}`, fatal: res.status >= 500 };
    }
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(PROBE_INITIALIZE),
      signal,
    });
    const body = await res.text();
    const session = res.headers.get('mcp-session-id');
    if (session) {
      // Close the probe's session (per-session stdio servers would otherwise keep a process for it).
      await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session }, signal: AbortSignal.timeout(2000) })
        .then((r) => r.text())
        .catch(() => undefined);
    }
    if (authGuarded && (res.status === 401 || res.status === 403)) return { ok: true };
    if (res.status === 200 && body.includes('"result"')) return { ok: true };
    return { ok: false, reason: `initialize answered ${res.status}: ${body.slice(0, 300)}`, fatal: res.status >= 500 };
  } catch (err) {
    return { ok: false, reason: `initialize failed: ${(err as Error).message}`, fatal: false };
  }
}

/** `http://<loopback-or-host>:<port>` for the proxy's own endpoints (`/health`). */
export function proxyBaseUrl(config: RunConfig): string {
  const host = !config.host || config.host === '0.0.0.0' ? '127.0.0.1' : config.host === '::' ? '::1' : config.host;
  return `http://${urlHost(host)}:${config.port}`;
}

/** The proxy's `/health` verdict: true = healthy, false = unhealthy (503), undefined = no answer. */
export async function healthOnce(config: RunConfig, timeoutMs = 5000): Promise<boolean | undefined> {
  try {
    const res = await fetch(`${proxyBaseUrl(config)}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.text();
    return res.status !== 503;
  } catch {
    return undefined;
  }
}
