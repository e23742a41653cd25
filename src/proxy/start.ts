import type { Logger } from '../logging.js';
import { ErrorCodes, ThvError } from '../errors.js';
import type { ProxyMode, ToolOverride, TransportType } from '../config/run-config.js';
import { proxyAuth, type ProxyAuth, type ProxyAuthSettings } from '../middleware/auth.js';
import { authz } from '../middleware/authz.js';
import { loadAuthzDoc } from '../authz/load.js';
import { bodyLimit } from '../middleware/body-limit.js';
import { mcpParse } from '../middleware/mcp-parse.js';
import { originGuard, originGuardWarning } from '../middleware/origin.js';
import { recovery } from '../middleware/recovery.js';
import { toolFilter } from '../middleware/tool-filter.js';
import type { NamedMiddleware } from '../middleware/types.js';
import { describeExit, StdioProcess, type ExitInfo, type ProcessSpec } from '../runtime/process/stdio-process.js';
import { StdioBridge } from '../transport/stdio/bridge.js';
import { legacySseHandlers } from '../transport/stdio/legacy-sse-handler.js';
import { streamableHandler } from '../transport/stdio/streamable-handler.js';
import type { SessionMode } from '../transport/stdio/server-link.js';
import { TransparentProxy } from '../transport/transparent.js';
import { tokenExchange } from '../middleware/token-exchange.js';
import type { RemoteSettings } from '../remote/settings.js';
import type { TokenExchangeSettings } from '../remote/token-exchange-settings.js';
import { buildObservability, type ObservabilityBlocks } from '../telemetry/observability.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Runtime } from '../runtime/types.js';
import { ProxyServer, type HealthReport, type RouteHandler } from './http-server.js';
import { freePort, waitForPort } from './net.js';

export interface ProxySettings {
  name: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  transport: TransportType;
  proxyMode: ProxyMode;
  /** The server process; for HTTP transports it gets MCP_PORT etc. added here. */
  spec: ProcessSpec;
  targetHost: string;
  /** HTTP transports: the port the server listens on (0 picks one). */
  targetPort: number;
  stdioSessions: SessionMode;
  maxSessions: number;
  sessionTtlMs: number;
  requestTimeoutMs: number;
  allowedOrigins?: string[];
  trustProxyHeaders: boolean;
  endpointPrefix?: string;
  stateless: boolean;
  /** Streamable HTTP of the stdio bridge: refuse an `MCP-Protocol-Version` header naming no known revision. */
  strictProtocolValidation: boolean;
  toolsFilter?: string[];
  toolsOverride?: Record<string, ToolOverride>;
  /** Inbound authentication (`--oidc-*`); undefined runs every request as the local user. */
  auth?: ProxyAuthSettings;
  /** `--authz-config`: the parsed file (RunConfig `authz_config`) and where it came from (for line numbers). */
  authz?: { doc: unknown; sourcePath?: string };
  /** What runs the server (a container runtime); without it `spec` runs as a local process. */
  runtime?: Runtime;
  /** Audit, telemetry and webhook blocks of the RunConfig (src/telemetry/observability.ts). */
  observability?: ObservabilityBlocks;
  /** How long an HTTP server may take to open its port. */
  startTimeoutMs: number;
  /** A remote MCP server (`thv run <URL>`): no process, the proxy forwards to the URL (src/remote/). */
  remote?: RemoteSettings;
  /** RFC 8693 token exchange of the caller's token (`--token-exchange-url`). */
  tokenExchange?: TokenExchangeSettings;
  logger: Logger;
}

export interface RunningProxy {
  /** The URL clients use (ToolHive's form: `/mcp`, or `/sse#<name>`). */
  url: string;
  port: number;
  /** Resolves when the proxy can no longer serve (shared or HTTP server process gone for good). */
  stop(): Promise<void>;
}

/**
 * The request chain, outermost first. The order is fixed and documented in docs/middleware.md; later
 * stages (audit, auth, token exchange, webhooks, telemetry, authz) slot in at their marked places.
 */
export function buildStages(
  s: ProxySettings,
  port: number,
): { stages: NamedMiddleware[]; originChecked: boolean; auth: ProxyAuth; metrics: ((req: IncomingMessage, res: ServerResponse) => void) | undefined } {
  // Compiled before anything else is set up, so that a bad policy file stops `thv run` with its line.
  const authzStage = s.authz ? authz({ authorizer: loadAuthzDoc(s.authz.doc, s.authz.sourcePath).authorizer, serverName: s.name, logger: s.logger }) : undefined;
  const stages: NamedMiddleware[] = [recovery(s.logger)];
  const originOptions = { allowedOrigins: s.allowedOrigins, host: s.host, port };
  const origin = originGuard(originOptions);
  if (origin) stages.push(origin);
  else {
    const warning = originGuardWarning(originOptions);
    if (warning) s.logger.warn(warning);
  }
  stages.push(bodyLimit());
  const obs = buildObservability({
    ...s.observability,
    name: s.name,
    transport: s.transport,
    sseTransport: s.transport === 'sse' || (s.transport === 'stdio' && s.proxyMode === 'sse'),
    trustProxyHeaders: s.trustProxyHeaders,
    answersReported: s.transport === 'stdio' && s.proxyMode !== 'sse',
    logger: s.logger,
  });
  // Outside auth, so that 401 and 403 are audited too.
  if (obs.audit) stages.push(obs.audit);
  const mcpPath = s.transport === 'stdio' ? (s.proxyMode === 'sse' ? '/sse' : '/mcp') : s.transport === 'sse' ? '/sse' : '/mcp';
  const auth = proxyAuth(s.auth, s.logger, `http://${urlHost(s.host)}:${port}${mcpPath}`);
  stages.push(auth.stage);
  stages.push(mcpParse());
  if (s.tokenExchange) stages.push(tokenExchange({ ...s.tokenExchange, logger: s.logger }));
  const filter = toolFilter({ filterTools: s.toolsFilter, toolsOverride: s.toolsOverride });
  if (filter) stages.push(filter);
  stages.push(...obs.webhooks);
  if (obs.telemetry) stages.push(obs.telemetry);
  if (authzStage) stages.push(authzStage);
  // Observability is flushed and stopped wherever the proxy closes its auth stage.
  const closeAll = async (): Promise<void> => {
    await auth.close();
    await obs.close();
  };
  return { stages, originChecked: origin !== undefined, auth: { ...auth, close: closeAll }, metrics: obs.metrics };
}

export async function startProxy(s: ProxySettings): Promise<RunningProxy> {
  const port = s.port === 0 ? await freePort(s.host) : s.port;
  const { stages, originChecked, auth, metrics } = buildStages(s, port);
  const clientUrl = (path: string): string => `http://${urlHost(s.host)}:${port}${path}`;

  if (s.transport === 'stdio') {
    const bridge = new StdioBridge({
      spec: s.spec,
      runtime: s.runtime,
      mode: s.stdioSessions,
      sessionTtlMs: s.sessionTtlMs,
      maxSessions: s.maxSessions,
      requestTimeoutMs: s.requestTimeoutMs,
      logger: s.logger,
    });
    try {
      await bridge.start();
    } catch (err) {
      await auth.close();
      throw err;
    }
    const routes: Record<string, RouteHandler> = {};
    let url: string;
    if (s.proxyMode === 'sse') {
      const legacy = legacySseHandlers(bridge, { trustProxyHeaders: s.trustProxyHeaders });
      routes['/sse'] = legacy.sse;
      routes['/messages'] = legacy.messages;
      url = clientUrl(`/sse#${encodeURIComponent(s.name)}`);
    } else {
      routes['/mcp'] = streamableHandler(bridge, { strictProtocolValidation: s.strictProtocolValidation });
      url = clientUrl('/mcp');
    }
    const health = (): HealthReport => {
      const h = bridge.health();
      return {
        status: h.healthy ? 'healthy' : 'unhealthy',
        transport: s.proxyMode === 'sse' ? 'stdio' : 'streamable-http',
        mcp: { available: h.healthy, sessions: h.sessions, ...(h.error ? { error: h.error } : {}) },
      };
    };
    const server = new ProxyServer({ host: s.host, port, logger: s.logger, stages, routes, health, wellKnown: auth.wellKnown, metrics });
    try {
      await server.listen();
    } catch (err) {
      await bridge.stop();
      await auth.close();
      throw err;
    }
    return {
      url,
      port,
      async stop() {
        await server.close();
        await bridge.stop();
        await s.runtime?.cleanup?.();
        await auth.close();
      },
    };
  }

  if (s.remote) {
    const { startRemoteProxy } = await import('../remote/start.js');
    return startRemoteProxy(s, s.remote, { port, stages, originChecked, auth, metrics, clientUrl });
  }

  // sse / streamable-http: the server listens itself; we proxy to it.
  const targetPort = s.targetPort === 0 ? await freePort(s.targetHost) : s.targetPort;
  const env = {
    ...s.spec.env,
    MCP_TRANSPORT: s.transport,
    MCP_PORT: String(targetPort),
    FASTMCP_PORT: String(targetPort),
    MCP_HOST: s.targetHost,
  };
  let exitInfo: string | undefined;
  let onExit: (reason: string) => void = () => {};
  const exited = new Promise<never>((_, reject) => {
    onExit = (reason) => reject(new Error(reason));
  });
  exited.catch(() => {});
  const onServerExit = (info: ExitInfo): void => {
    exitInfo = describeExit(info);
    s.logger.warn({ code: info.code, signal: info.signal }, exitInfo);
    onExit(exitInfo);
  };
  const proc = s.runtime
    ? s.runtime.launch({ onExit: onServerExit, env: { MCP_TRANSPORT: s.transport, MCP_PORT: String(targetPort), FASTMCP_PORT: String(targetPort), MCP_HOST: s.targetHost }, port: targetPort }, s.logger)
    : new StdioProcess({ ...s.spec, env }, s.logger, undefined, onServerExit);
  try {
    await proc.spawned;
    s.logger.info({ port: targetPort }, 'waiting for the MCP server to listen');
    if (s.runtime?.waitListening) await s.runtime.waitListening(s.targetHost, targetPort, s.startTimeoutMs, exited);
    else await waitForPort(s.targetHost, targetPort, s.startTimeoutMs, exited);
  } catch (err) {
    await proc.stop(500);
    await auth.close();
    throw new ThvError(ErrorCodes.ServerStartFailed, `the MCP server did not start: ${(err as Error).message}`, {
      hint: `it must listen on the port given in MCP_PORT (${targetPort}) for --transport ${s.transport}`,
    });
  }
  const proxy = new TransparentProxy({
    target: `http://${urlHost(s.targetHost)}:${targetPort}`,
    transport: s.transport,
    stateless: s.stateless,
    trustProxyHeaders: s.trustProxyHeaders,
    endpointPrefix: s.endpointPrefix,
    stripOrigin: originChecked,
    logger: s.logger,
  });
  const health = (): HealthReport => ({
    status: exitInfo ? 'unhealthy' : 'healthy',
    transport: s.transport,
    mcp: { available: !exitInfo, ...(exitInfo ? { error: exitInfo } : {}) },
  });
  const server = new ProxyServer({ host: s.host, port, logger: s.logger, stages, routes: { '*': proxy.handle }, health, wellKnown: auth.wellKnown, metrics });
  try {
    await server.listen();
  } catch (err) {
    await proc.stop(500);
    await auth.close();
    throw err;
  }
  const path = s.transport === 'sse' ? `/sse#${encodeURIComponent(s.name)}` : '/mcp';
  return {
    url: clientUrl(path),
    port,
    async stop() {
      await server.close();
      await proxy.close();
      await proc.stop();
      await s.runtime?.cleanup?.();
      await auth.close();
    },
  };
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
