import type { Logger } from '../logging.js';
import { ErrorCodes, ThvError } from '../errors.js';
import type { ProxyMode, ToolOverride, TransportType } from '../config/run-config.js';
import { bodyLimit } from '../middleware/body-limit.js';
import { mcpParse } from '../middleware/mcp-parse.js';
import { originGuard, originGuardWarning } from '../middleware/origin.js';
import { recovery } from '../middleware/recovery.js';
import { toolFilter } from '../middleware/tool-filter.js';
import type { NamedMiddleware } from '../middleware/types.js';
import { describeExit, StdioProcess, type ProcessSpec } from '../runtime/process/stdio-process.js';
import { StdioBridge } from '../transport/stdio/bridge.js';
import { legacySseHandlers } from '../transport/stdio/legacy-sse-handler.js';
import { streamableHandler } from '../transport/stdio/streamable-handler.js';
import type { SessionMode } from '../transport/stdio/server-link.js';
import { TransparentProxy } from '../transport/transparent.js';
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
  toolsFilter?: string[];
  toolsOverride?: Record<string, ToolOverride>;
  /** How long an HTTP server may take to open its port. */
  startTimeoutMs: number;
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
export function buildStages(s: ProxySettings, port: number): { stages: NamedMiddleware[]; originChecked: boolean } {
  const stages: NamedMiddleware[] = [recovery(s.logger)];
  const originOptions = { allowedOrigins: s.allowedOrigins, host: s.host, port };
  const origin = originGuard(originOptions);
  if (origin) stages.push(origin);
  else {
    const warning = originGuardWarning(originOptions);
    if (warning) s.logger.warn(warning);
  }
  stages.push(bodyLimit());
  // audit (issue: observability) · auth (issue: inbound authentication)
  stages.push(mcpParse());
  // token exchange (issue: remote servers)
  const filter = toolFilter({ filterTools: s.toolsFilter, toolsOverride: s.toolsOverride });
  if (filter) stages.push(filter);
  // mutating and validating webhooks · telemetry (issue: observability) · authz (issue: Cedar)
  return { stages, originChecked: origin !== undefined };
}

export async function startProxy(s: ProxySettings): Promise<RunningProxy> {
  const port = s.port === 0 ? await freePort(s.host) : s.port;
  const { stages, originChecked } = buildStages(s, port);
  const clientUrl = (path: string): string => `http://${urlHost(s.host)}:${port}${path}`;

  if (s.transport === 'stdio') {
    const bridge = new StdioBridge({
      spec: s.spec,
      mode: s.stdioSessions,
      sessionTtlMs: s.sessionTtlMs,
      maxSessions: s.maxSessions,
      requestTimeoutMs: s.requestTimeoutMs,
      logger: s.logger,
    });
    await bridge.start();
    const routes: Record<string, RouteHandler> = {};
    let url: string;
    if (s.proxyMode === 'sse') {
      const legacy = legacySseHandlers(bridge, { trustProxyHeaders: s.trustProxyHeaders });
      routes['/sse'] = legacy.sse;
      routes['/messages'] = legacy.messages;
      url = clientUrl(`/sse#${encodeURIComponent(s.name)}`);
    } else {
      routes['/mcp'] = streamableHandler(bridge);
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
    const server = new ProxyServer({ host: s.host, port, logger: s.logger, stages, routes, health });
    try {
      await server.listen();
    } catch (err) {
      await bridge.stop();
      throw err;
    }
    return {
      url,
      port,
      async stop() {
        await server.close();
        await bridge.stop();
      },
    };
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
  const proc = new StdioProcess({ ...s.spec, env }, s.logger, undefined, (info) => {
    exitInfo = describeExit(info);
    s.logger.warn({ code: info.code, signal: info.signal }, exitInfo);
    onExit(exitInfo);
  });
  try {
    await proc.spawned;
    s.logger.info({ port: targetPort }, 'waiting for the MCP server to listen');
    await waitForPort(s.targetHost, targetPort, s.startTimeoutMs, exited);
  } catch (err) {
    await proc.stop(500);
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
  const server = new ProxyServer({ host: s.host, port, logger: s.logger, stages, routes: { '*': proxy.handle }, health });
  try {
    await server.listen();
  } catch (err) {
    await proc.stop(500);
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
    },
  };
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
