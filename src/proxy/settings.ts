import type { Logger } from '../logging.js';
import type { RunConfig } from '../config/run-config.js';
import type { InMemorySecrets } from '../config/build-run-config.js';
import { authSettingsFromOidcConfig } from '../middleware/auth.js';
import { parseDuration } from '../config/run-options.js';
import { processSpec } from '../runtime/process/command.js';
import { dockerRuntimeFor } from '../runtime/docker/runtime.js';
import type { ProxySettings } from './start.js';
import { remoteSettingsFromRunConfig } from '../remote/settings.js';
import { tokenExchangeSettingsFromRunConfig } from '../remote/token-exchange-settings.js';

const DEFAULT_SESSION_TTL_MS = 2 * 60 * 60 * 1000;
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_SESSIONS = 100;
const DEFAULT_START_TIMEOUT_MS = 120_000;

/** What the proxy needs, read from a RunConfig (fresh from flags, or loaded from disk). */
export function proxySettingsFromRunConfig(
  config: RunConfig,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
  secrets: InMemorySecrets = {},
): ProxySettings {
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
    // Containers: the spec only names the image; the runtime below runs it (the image was built or pulled by `thv run`).
    // A remote workload runs nothing locally (src/remote/start.ts).
    spec: config.remote_url ? { command: config.remote_url, args: [], env: {} } : config.thv_runtime === 'docker' ? { command: config.image, args: config.cmd_args ?? [], env: {} } : processSpec(config.image, config.cmd_args ?? [], serverEnv),
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
    strictProtocolValidation: config.strict_protocol_validation ?? false,
    toolsFilter: config.tools_filter,
    toolsOverride: config.tools_override,
    authz: config.authz_config !== undefined ? { doc: config.authz_config, sourcePath: config.authz_config_path } : undefined,
    // The client secret never reaches the RunConfig: from memory, else the environment of a detached proxy.
    auth: authSettingsFromOidcConfig(config.oidc_config, secrets.oidcClientSecret, env),
    observability: {
      audit: config.audit_config,
      telemetry: config.telemetry_config,
      webhooks: { mutating: config.mutating_webhooks, validating: config.validating_webhooks },
    },
    runtime: config.thv_runtime === 'docker' ? dockerRuntimeFor(config, logger) : undefined,
    startTimeoutMs: DEFAULT_START_TIMEOUT_MS,
    // Remote workloads (`thv run <URL>`) and RFC 8693 token exchange (src/remote/).
    remote: remoteSettingsFromRunConfig(config, secrets, env),
    tokenExchange: tokenExchangeSettingsFromRunConfig(config, secrets, env),
    logger,
  };
}
