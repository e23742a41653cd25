import type { Logger } from '../logging.js';
import type { RunConfig } from '../config/run-config.js';
import { parseDuration } from '../config/run-options.js';
import { processSpec } from '../runtime/process/command.js';
import type { ProxySettings } from './start.js';

const DEFAULT_SESSION_TTL_MS = 2 * 60 * 60 * 1000;
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_SESSIONS = 100;
const DEFAULT_START_TIMEOUT_MS = 120_000;

/** What the proxy needs, read from a RunConfig (fresh from flags, or loaded from disk). */
export function proxySettingsFromRunConfig(config: RunConfig, logger: Logger, env: NodeJS.ProcessEnv = process.env): ProxySettings {
  const ttl = config.session_ttl ? parseDuration(config.session_ttl) : 0;
  const requestTimeout = env.TOOLHIVE_PROXY_REQUEST_TIMEOUT ? parseDuration(env.TOOLHIVE_PROXY_REQUEST_TIMEOUT) : 0;
  const serverEnv: Record<string, string> = { ...(config.env_vars ?? {}) };
  serverEnv.MCP_TRANSPORT = config.transport;
  return {
    name: config.name,
    host: config.host,
    port: config.port,
    transport: config.transport,
    proxyMode: config.proxy_mode ?? 'streamable-http',
    spec: processSpec(config.image, config.cmd_args ?? [], serverEnv),
    targetHost: config.target_host ?? '127.0.0.1',
    targetPort: config.target_port ?? 0,
    stdioSessions: config.thv_stdio_sessions ?? 'per-session',
    maxSessions: config.thv_max_sessions ?? DEFAULT_MAX_SESSIONS,
    sessionTtlMs: ttl > 0 ? ttl : DEFAULT_SESSION_TTL_MS,
    requestTimeoutMs: requestTimeout > 0 ? requestTimeout : DEFAULT_REQUEST_TIMEOUT_MS,
    allowedOrigins: config.allowed_origins && config.allowed_origins.length > 0 ? config.allowed_origins : undefined,
    trustProxyHeaders: config.trust_proxy_headers ?? false,
    endpointPrefix: config.endpoint_prefix || undefined,
    stateless: config.stateless ?? false,
    toolsFilter: config.tools_filter,
    toolsOverride: config.tools_override,
    startTimeoutMs: DEFAULT_START_TIMEOUT_MS,
    logger,
  };
}
