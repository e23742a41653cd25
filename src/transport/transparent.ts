import type { IncomingHttpHeaders } from 'node:http';
import { Pool } from 'undici';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Logger } from '../logging.js';
import type { MessageTransform, ProxyContext } from '../middleware/types.js';
import { firstHeader, sendJsonRpcError, sendText } from './http-util.js';
import { JSONRPC_SERVER_ERROR, JSONRPC_SESSION_NOT_FOUND, type JsonRpcMessage } from './jsonrpc.js';

export interface TransparentProxyOptions {
  /** `http://host:port` of the server. */
  target: string;
  transport: 'sse' | 'streamable-http';
  stateless: boolean;
  trustProxyHeaders: boolean;
  /** Prefix put in front of the URL of legacy SSE `endpoint` events (`--endpoint-prefix`). */
  endpointPrefix: string | undefined;
  /**
   * Drop the client's Origin toward the server. Set when the proxy's own origin guard already checked
   * it: the Origin names the proxy, and a server that guards against DNS rebinding itself would refuse
   * an origin that is not its own.
   */
  stripOrigin: boolean;
  logger: Logger;
}

const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade',
  'proxy-authorization', 'proxy-authenticate', 'host', 'content-length',
]);

/**
 * Reverse proxy for servers that already speak Streamable HTTP or SSE. Bytes stream through untouched
 * unless a stage registered response transforms (tool filtering), or a legacy SSE `endpoint` event
 * needs its URL rewritten.
 */
export class TransparentProxy {
  private readonly pool: Pool;
  /** Session ids the server handed out; others are refused without asking it, as ToolHive does. */
  private readonly sessions = new Set<string>();

  constructor(private readonly options: TransparentProxyOptions) {
    this.pool = new Pool(options.target, { connections: 64, pipelining: 1, headersTimeout: 300_000, bodyTimeout: 0 });
  }

  readonly handle = async (ctx: ProxyContext): Promise<void> => {
    const { req, res } = ctx;
    const method = req.method ?? 'GET';
    if (this.options.stateless && (method === 'GET' || method === 'HEAD' || method === 'DELETE')) {
      return sendText(res, 405, 'method not allowed: server is stateless (POST only)', { Allow: 'POST, OPTIONS' });
    }
    const sessionId = firstHeader(req.headers['mcp-session-id']);
    const isInitialize = ctx.mcp?.method === 'initialize';
    if (sessionId !== undefined && !isInitialize && !this.options.stateless && !this.sessions.has(sessionId)) {
      return sendJsonRpcError(res, 404, ctx.mcp?.kind === 'request' ? ctx.mcp.id : undefined, JSONRPC_SESSION_NOT_FOUND, 'Session not found');
    }

    const headers = this.upstreamHeaders(ctx, isInitialize);
    let body: Buffer | string | undefined = ctx.body;
    if (ctx.messageChanged && ctx.message) body = JSON.stringify(ctx.message);
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    let upstream;
    try {
      upstream = await this.pool.request({
        path: ctx.query ? `${ctx.path}?${ctx.query}` : ctx.path,
        method: method as 'GET',
        headers,
        body,
        signal: abort.signal,
      });
    } catch (err) {
      if (abort.signal.aborted) return;
      this.options.logger.warn({ err: (err as Error).message }, 'MCP server unreachable');
      return sendJsonRpcError(res, 502, ctx.mcp?.id ?? null, JSONRPC_SERVER_ERROR, `MCP server unreachable: ${(err as Error).message}`);
    }

    const upstreamSession = firstHeader(upstream.headers['mcp-session-id'] as string | string[] | undefined);
    if (upstreamSession && upstream.statusCode >= 200 && upstream.statusCode < 300) this.sessions.add(upstreamSession);
    if (method === 'DELETE' && sessionId && (upstream.statusCode < 300 || upstream.statusCode === 404)) this.sessions.delete(sessionId);

    const outHeaders: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(upstream.headers)) {
      if (v !== undefined && !HOP_BY_HOP.has(k)) outHeaders[k] = v as string | string[];
    }
    const contentType = String(upstream.headers['content-type'] ?? '');
    const isSse = contentType.startsWith('text/event-stream');
    const transforms = ctx.responseTransforms;
    const rewriteEndpoint = isSse && this.options.transport === 'sse' && this.endpointRewrite(ctx);

    if (transforms.length > 0 && contentType.startsWith('application/json') && upstream.statusCode < 300) {
      const text = await upstream.body.text();
      let out = text;
      try {
        out = JSON.stringify(applyTransforms(JSON.parse(text) as JsonRpcMessage, transforms));
      } catch {
        // Not JSON-RPC: pass as is.
      }
      res.writeHead(upstream.statusCode, { ...outHeaders, 'content-length': String(Buffer.byteLength(out)) });
      res.end(out);
      return;
    }

    if (isSse && (transforms.length > 0 || rewriteEndpoint)) {
      res.writeHead(upstream.statusCode, outHeaders);
      res.flushHeaders();
      const parser = createParser({
        onEvent: (ev: EventSourceMessage) => {
          let data = ev.data;
          if (ev.event === 'endpoint' && rewriteEndpoint) data = rewriteEndpoint(data);
          else if ((ev.event === undefined || ev.event === 'message') && transforms.length > 0) {
            try {
              data = JSON.stringify(applyTransforms(JSON.parse(data) as JsonRpcMessage, transforms));
            } catch {
              // leave non-JSON data alone
            }
          }
          let frame = '';
          if (ev.id !== undefined) frame += `id: ${ev.id}\n`;
          if (ev.event !== undefined) frame += `event: ${ev.event}\n`;
          frame += `data: ${data.split('\n').join('\ndata: ')}\n\n`;
          res.write(frame);
        },
        onComment: (c) => res.write(`:${c}\n\n`),
        onRetry: (ms) => res.write(`retry: ${ms}\n\n`),
      });
      upstream.body.setEncoding('utf8');
      try {
        for await (const chunk of upstream.body) parser.feed(chunk as string);
      } catch {
        // client or server went away
      }
      res.end();
      return;
    }

    res.writeHead(upstream.statusCode, outHeaders);
    if (isSse) res.flushHeaders();
    try {
      for await (const chunk of upstream.body) res.write(chunk);
    } catch {
      // client or server went away mid-stream
    }
    res.end();
  };

  async close(): Promise<void> {
    await this.pool.destroy();
  }

  private upstreamHeaders(ctx: ProxyContext, isInitialize: boolean): Record<string, string> {
    const out: Record<string, string> = {};
    const h: IncomingHttpHeaders = ctx.req.headers;
    for (const [k, v] of Object.entries(h)) {
      if (v === undefined || HOP_BY_HOP.has(k)) continue;
      if (isInitialize && k === 'mcp-session-id') continue;
      if (k === 'origin' && this.options.stripOrigin) continue;
      out[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    const remote = ctx.req.socket.remoteAddress ?? '';
    const prior = firstHeader(h['x-forwarded-for']);
    out['x-forwarded-for'] = prior ? `${prior}, ${remote}` : remote;
    out['x-forwarded-host'] = firstHeader(h.host) ?? '';
    out['x-forwarded-proto'] = (ctx.req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
    return out;
  }

  /** The rewrite of legacy SSE `endpoint` URLs, or undefined when there is nothing to rewrite. */
  private endpointRewrite(ctx: ProxyContext): ((data: string) => string) | undefined {
    const h = ctx.req.headers;
    let prefix = this.options.endpointPrefix;
    if (!prefix && this.options.trustProxyHeaders) prefix = firstHeader(h['x-forwarded-prefix']);
    const host = this.options.trustProxyHeaders ? firstHeader(h['x-forwarded-host']) : undefined;
    const proto = this.options.trustProxyHeaders ? firstHeader(h['x-forwarded-proto']) : undefined;
    if (!prefix && !host) return undefined;
    const normalised = prefix ? `/${prefix.replace(/^\/+|\/+$/g, '')}` : '';
    return (data) => {
      const absolute = /^[a-z][a-z0-9+.-]*:\/\//i.test(data);
      const url = new URL(data, 'http://placeholder');
      let out = `${normalised}${url.pathname}${url.search}`;
      if (host) out = `${proto ?? (absolute ? url.protocol.slice(0, -1) : 'http')}://${host}${out}`;
      else if (absolute) out = `${url.protocol}//${url.host}${out}`;
      return out;
    };
  }
}

function applyTransforms(msg: JsonRpcMessage, transforms: readonly MessageTransform[]): JsonRpcMessage {
  let out = msg;
  for (let i = transforms.length - 1; i >= 0; i--) out = transforms[i]!(out);
  return out;
}
