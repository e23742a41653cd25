/**
 * The proxy of a remote workload (`thv run <URL>`): authenticate toward the remote first (which may
 * involve the user), then serve the chain in front of a transparent proxy whose upstream is the URL.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProxyAuth } from '../middleware/auth.js';
import type { NamedMiddleware } from '../middleware/types.js';
import { ProxyServer, type HealthReport } from '../proxy/http-server.js';
import type { ProxySettings, RunningProxy } from '../proxy/start.js';
import { TransparentProxy } from '../transport/transparent.js';
import { connectRemote } from './connect.js';
import type { RemoteSettings } from './settings.js';
import { defaultLoginStore } from './store.js';

export interface RemoteProxyParts {
  port: number;
  stages: NamedMiddleware[];
  originChecked: boolean;
  auth: ProxyAuth;
  metrics: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  clientUrl: (path: string) => string;
}

export async function startRemoteProxy(s: ProxySettings, remote: RemoteSettings, p: RemoteProxyParts): Promise<RunningProxy> {
  const logger = s.logger.child({ remote: remote.url });
  let connection;
  try {
    const store = await defaultLoginStore(process.env, logger);
    const resolveSecret = async (name: string): Promise<string> => {
      const { userSecretsProvider } = await import('../secrets/index.js');
      return (await userSecretsProvider(process.env)).get(name);
    };
    connection = await connectRemote(remote, { name: s.name, logger, store, resolveSecret });
  } catch (err) {
    await p.auth.close();
    throw err;
  }
  const url = new URL(remote.url);
  const proxy = new TransparentProxy({
    target: url.origin,
    transport: s.transport === 'sse' ? 'sse' : 'streamable-http',
    stateless: s.stateless,
    trustProxyHeaders: s.trustProxyHeaders,
    endpointPrefix: s.endpointPrefix,
    stripOrigin: p.originChecked,
    logger,
    remote: connection.upstream,
  });
  // Remote health is not probed (TOOLHIVE_REMOTE_HEALTHCHECKS is not implemented): the proxy reports itself.
  const health = (): HealthReport => ({ status: 'healthy', transport: s.transport, mcp: { available: true } });
  const server = new ProxyServer({ host: s.host, port: p.port, logger: s.logger, stages: p.stages, routes: { '*': proxy.handle }, health, wellKnown: p.auth.wellKnown, metrics: p.metrics });
  try {
    await server.listen();
  } catch (err) {
    connection.close();
    await proxy.close();
    await p.auth.close();
    throw err;
  }
  // Clients use the remote's own path on the proxy (any path maps to it); ToolHive prints the same form.
  // Spec §2.1: remote path "/" counts as empty, the query is dropped; SSE falls back to /sse.
  const remotePath = url.pathname === '/' ? '' : url.pathname;
  const clientPath = s.transport === 'sse' ? `${remotePath || '/sse'}#${encodeURIComponent(s.name)}` : remotePath;
  return {
    url: p.clientUrl(clientPath),
    port: p.port,
    async stop() {
      await server.close();
      await proxy.close();
      connection.close();
      await p.auth.close();
    },
  };
}
