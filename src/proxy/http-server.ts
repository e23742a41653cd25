import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logging.js';
import { ErrorCodes, ThvError } from '../errors.js';
import { compose } from '../middleware/chain.js';
import type { NamedMiddleware, ProxyContext } from '../middleware/types.js';
import { sendJson, sendText, splitUrl } from '../transport/http-util.js';

export type RouteHandler = (ctx: ProxyContext) => Promise<void>;

export interface HealthReport {
  status: 'healthy' | 'degraded' | 'unhealthy';
  transport: string;
  mcp?: { available: boolean; error?: string; sessions?: number };
}

export interface ProxyServerOptions {
  host: string;
  port: number;
  logger: Logger;
  /** The request chain, outermost first, applied to every MCP route. */
  stages: readonly NamedMiddleware[];
  /** MCP routes by exact path; `*` is the catch-all (transparent proxy). */
  routes: Record<string, RouteHandler>;
  health: () => HealthReport;
  /** Handles `/.well-known/…` outside the chain; returns false to answer 404. */
  wellKnown?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** `/metrics` (Prometheus), answered outside the chain; without it `/metrics` is a 404 page. */
  metrics?: (req: IncomingMessage, res: ServerResponse) => void;
}

/**
 * The proxy's HTTP listener. `/health` and `/.well-known/*` are answered outside the chain; everything
 * else goes through the stages to its route.
 */
export class ProxyServer {
  private server: Server | undefined;
  private readonly routes = new Map<string, RouteHandler>();
  private readonly catchAll: RouteHandler | undefined;

  constructor(private readonly options: ProxyServerOptions) {
    for (const [path, handler] of Object.entries(options.routes)) {
      if (path === '*') continue;
      this.routes.set(path, compose(options.stages, handler));
    }
    const star = options.routes['*'];
    this.catchAll = star ? compose(options.stages, star) : undefined;
  }

  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  async listen(): Promise<void> {
    const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0, headersTimeout: 10_000 }, (req, res) => this.dispatch(req, res));
    server.on('clientError', (err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => {
        reject(
          err.code === 'EADDRINUSE'
            ? new ThvError(ErrorCodes.AddressInUse, `requested proxy port ${this.options.port} is not available`, { hint: 'choose another --proxy-port, or omit it to get a free one' })
            : err.code === 'EADDRNOTAVAIL'
              ? new ThvError(ErrorCodes.InvalidArgument, `cannot listen on ${this.options.host}: no such address on this machine`)
              : err,
        );
      };
      server.once('error', onError);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', onError);
        resolve();
      });
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private dispatch(req: IncomingMessage, res: ServerResponse): void {
    const { path, query } = splitUrl(req.url);
    if (path === '/health') return this.health(req, res);
    if (path === '/metrics') {
      if (this.options.metrics) return this.options.metrics(req, res);
      return sendText(res, 404, '404 page not found');
    }
    if (path.startsWith('/.well-known/')) {
      if (this.options.wellKnown?.(req, res)) return;
      return sendJson(res, 404, { error: 'not_found' });
    }
    const route = this.routes.get(path) ?? this.catchAll;
    if (!route) return sendText(res, 404, '404 page not found');
    const ctx: ProxyContext = {
      req,
      res,
      path,
      query,
      startedAt: performance.now(),
      body: undefined,
      message: undefined,
      mcp: undefined,
      messageChanged: false,
      identity: undefined,
      answerJson: undefined,
      responseTransforms: [],
      locals: new Map(),
    };
    route(ctx).catch((err: unknown) => {
      this.options.logger.error({ err: (err as Error).message }, 'unhandled request error');
      if (!res.headersSent) sendText(res, 500, 'Internal Server Error');
      else res.destroy();
    });
  }

  private health(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendText(res, 405, 'Method not allowed', { Allow: 'GET' });
    const report = this.options.health();
    sendJson(res, report.status === 'unhealthy' ? 503 : 200, { ...report, timestamp: new Date().toISOString() });
  }
}
