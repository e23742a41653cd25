import type { IncomingHttpHeaders } from 'node:http';
import { Pool } from 'undici';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Logger } from '../logging.js';
import type { MessageTransform, ProxyContext } from '../middleware/types.js';
import { firstHeader, sendJsonRpcError, sendRawJson, sendText } from './http-util.js';
import { classifyRevision, MODERN_PROTOCOL_VERSION } from './revision.js';
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
  /** Set when the server is a remote URL (`thv run <URL>`, spec §2.6/§7.3); `target` is then its origin. */
  remote?: RemoteUpstream;
}

/** What changes when the upstream is a remote MCP server rather than a local one. */
export interface RemoteUpstream {
  /** The remote URL: every request path is replaced by its path, and its query goes before the client's. */
  url: URL;
  /**
   * Sets outbound headers (forwarded headers, the remote's access token) on each upstream request.
   * A rejection with `unavailable` set answers 503 + Retry-After without contacting the remote.
   */
  outboundHeaders?: (headers: Record<string, string>) => Promise<void>;
  /** The remote answered 401 (its credentials were refused). */
  onUnauthorized?: () => void;
  /**
   * The remote answered 403 with this `WWW-Authenticate`. When it asks for scopes not yet granted, the
   * answer is a step-up to run (a new authorization); the request is then sent once more, with the new
   * credentials when the step-up resolved true. Undefined: the 403 goes to the client as it is.
   */
  stepUpFor?: (wwwAuthenticate: string) => (() => Promise<boolean>) | undefined;
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
  /**
   * Session ids the server handed out (others are refused without asking it, as ToolHive does), with
   * what is needed to open the session again when the server forgets it (a restart): the initialize
   * body, and the id the server uses now when that differs from the one the client holds.
   */
  private readonly sessions = new Map<string, { initBody: Buffer | string | undefined; upstreamId: string }>();

  constructor(private readonly options: TransparentProxyOptions) {
    this.pool = new Pool(options.target, { connections: 64, pipelining: 1, headersTimeout: 300_000, bodyTimeout: 0 });
  }

  readonly handle = async (ctx: ProxyContext): Promise<void> => {
    const { req, res } = ctx;
    const method = req.method ?? 'GET';
    const protocolVersion = firstHeader(req.headers['mcp-protocol-version']);
    if ((this.options.stateless || protocolVersion === MODERN_PROTOCOL_VERSION) && (method === 'GET' || method === 'HEAD' || method === 'DELETE')) {
      const why = this.options.stateless ? 'server is stateless' : 'stateless MCP revision';
      return sendText(res, 405, `method not allowed: ${why} (POST only)`, { Allow: 'POST, OPTIONS' });
    }
    let modern = false;
    if (ctx.mcp?.kind === 'request') {
      const revision = classifyRevision(ctx.mcp.method, ctx.mcp.params, protocolVersion);
      if ('error' in revision) {
        return sendRawJson(res, 400, JSON.stringify({ jsonrpc: '2.0', id: ctx.mcp.id ?? null, error: revision.error }));
      }
      modern = revision.era === 'modern';
    }
    const isInitialize = ctx.mcp?.method === 'initialize';
    // Modern requests carry no session: an id they send is neither checked nor forwarded.
    const sessionId = modern ? undefined : firstHeader(req.headers['mcp-session-id']);
    const known = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    if (sessionId !== undefined && !isInitialize && !this.options.stateless && !known) {
      return sendJsonRpcError(res, 404, ctx.mcp?.kind === 'request' ? ctx.mcp.id : undefined, JSONRPC_SESSION_NOT_FOUND, 'Session not found');
    }

    const headers = this.upstreamHeaders(ctx, isInitialize || modern);
    if (known && !isInitialize) headers['mcp-session-id'] = known.upstreamId;
    let body: Buffer | string | undefined = ctx.body;
    if (ctx.messageChanged && ctx.message) body = JSON.stringify(ctx.message);
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    const path = this.upstreamPath(ctx);
    if (this.options.remote?.outboundHeaders) {
      try {
        await this.options.remote.outboundHeaders(headers);
      } catch (err) {
        this.options.logger.warn({ err: (err as Error).message }, 'no credentials for the remote MCP server');
        return sendText(res, 503, 'Token temporarily unavailable', { 'Retry-After': '10' });
      }
    }
    const send = (h: Record<string, string>) => this.pool.request({ path, method: method as 'GET', headers: h, body, signal: abort.signal });
    let upstream;
    try {
      upstream = await send(headers);
      // The server forgot the session (it restarted): open it again with the stored initialize, then replay.
      if (upstream.statusCode === 404 && known && sessionId !== undefined && !isInitialize && method !== 'DELETE' && known.initBody !== undefined) {
        await upstream.body.dump();
        const fresh = await this.reinitialise(path, headers, known.initBody, abort.signal);
        if (fresh !== undefined) {
          known.upstreamId = fresh;
          this.options.logger.info({ session: sessionId }, 'the MCP server lost the session; initialised it again');
          upstream = await send({ ...headers, 'mcp-session-id': fresh });
        } else {
          upstream = await send(headers);
        }
      }
      const wwwAuthenticate = upstream.statusCode === 403 ? firstHeader(upstream.headers['www-authenticate'] as string | string[] | undefined) : undefined;
      const stepUp = wwwAuthenticate !== undefined ? this.options.remote?.stepUpFor?.(wwwAuthenticate) : undefined;
      if (stepUp) {
        await upstream.body.dump();
        if (await stepUp()) await this.options.remote!.outboundHeaders?.(headers);
        upstream = await send(headers);
      }
    } catch (err) {
      if (abort.signal.aborted) return;
      this.options.logger.warn({ err: (err as Error).message }, 'MCP server unreachable');
      return sendJsonRpcError(res, 502, ctx.mcp?.id ?? null, JSONRPC_SERVER_ERROR, `MCP server unreachable: ${(err as Error).message}`);
    }

    if (upstream.statusCode === 401) this.options.remote?.onUnauthorized?.();
    const upstreamSession = firstHeader(upstream.headers['mcp-session-id'] as string | string[] | undefined);
    if (upstreamSession && upstream.statusCode >= 200 && upstream.statusCode < 300 && !this.sessions.has(upstreamSession)) {
      this.sessions.set(upstreamSession, { initBody: isInitialize ? body : undefined, upstreamId: upstreamSession });
    }
    if (method === 'DELETE' && sessionId && (upstream.statusCode < 300 || upstream.statusCode === 404)) this.sessions.delete(sessionId);

    const outHeaders: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(upstream.headers)) {
      if (v !== undefined && !HOP_BY_HOP.has(k)) outHeaders[k] = v as string | string[];
    }
    // After a re-initialisation the client keeps the session id it knows.
    if (known && sessionId !== undefined && outHeaders['mcp-session-id'] !== undefined) outHeaders['mcp-session-id'] = sessionId;
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

  /** Sends a stored initialize and its `initialized` notification; the server's new session id, if any. */
  private async reinitialise(path: string, headers: Record<string, string>, initBody: Buffer | string, signal: AbortSignal): Promise<string | undefined> {
    const h = { ...headers };
    delete h['mcp-session-id'];
    const init = await this.pool.request({ path, method: 'POST', headers: h, body: initBody, signal });
    await init.body.dump();
    const fresh = firstHeader(init.headers['mcp-session-id'] as string | string[] | undefined);
    if (init.statusCode >= 300 || fresh === undefined) return undefined;
    const note = await this.pool.request({
      path,
      method: 'POST',
      headers: { ...h, 'mcp-session-id': fresh, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      signal,
    });
    await note.body.dump();
    return fresh;
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
    if (this.options.remote) {
      // A remote is not ours: it must not learn our host, and sees its own scheme (spec §7.3).
      delete out['x-forwarded-host'];
      out['x-forwarded-proto'] = this.options.remote.url.protocol.slice(0, -1);
    }
    return out;
  }

  /** The upstream path: the client's, or for a remote its URL's path with its query first. */
  private upstreamPath(ctx: ProxyContext): string {
    const remote = this.options.remote?.url;
    if (!remote) return ctx.query ? `${ctx.path}?${ctx.query}` : ctx.path;
    const query = [remote.search.slice(1), ctx.query].filter((q) => q !== '').join('&');
    return `${remote.pathname || '/'}${query ? `?${query}` : ''}`;
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
