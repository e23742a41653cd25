import type { ProxyContext } from '../../middleware/types.js';
import { firstHeader, sendJsonRpcError, sendText } from '../http-util.js';
import { JSONRPC_INVALID_REQUEST, JSONRPC_SERVER_ERROR, JSONRPC_SESSION_NOT_FOUND } from '../jsonrpc.js';
import { SseWriter } from '../sse-writer.js';
import type { StdioBridge } from './bridge.js';
import { forward } from './streamable-handler.js';

export interface LegacySseOptions {
  trustProxyHeaders: boolean;
}

/**
 * The deprecated HTTP+SSE transport (protocol revision 2024-11-05): `GET /sse` opens a session and
 * announces where to POST (`endpoint` event); `POST /messages?session_id=` delivers client messages,
 * whose answers arrive on the session's SSE stream. Unlike ToolHive, which broadcasts every server
 * message to every connected client, each stream carries only its own session's messages.
 */
export function legacySseHandlers(bridge: StdioBridge, options: LegacySseOptions) {
  return {
    async sse(ctx: ProxyContext): Promise<void> {
      if (ctx.req.method !== 'GET') return sendText(ctx.res, 405, 'Method not allowed', { Allow: 'GET' });
      const created = bridge.createSession('legacy-sse');
      if ('error' in created) {
        return sendJsonRpcError(ctx.res, created.error === 'too-many-sessions' ? 503 : 502, null, JSONRPC_SERVER_ERROR, created.message);
      }
      const session = created.session;
      const stream = new SseWriter(ctx.res, {}, { keepalive: true, onClose: () => bridge.closeSession(session) });
      stream.event('endpoint', endpointUrl(ctx, session.id, options));
      session.attachStream(stream);
    },

    async messages(ctx: ProxyContext): Promise<void> {
      if (ctx.req.method !== 'POST') return sendText(ctx.res, 405, 'Method not allowed', { Allow: 'POST' });
      const sessionId = new URLSearchParams(ctx.query).get('session_id') ?? new URLSearchParams(ctx.query).get('sessionId');
      if (!sessionId) return sendText(ctx.res, 400, 'session_id is required');
      const session = bridge.sessions.get(sessionId);
      if (!session || session.closed || session.kind !== 'legacy-sse') {
        return sendJsonRpcError(ctx.res, 404, ctx.mcp?.id, JSONRPC_SESSION_NOT_FOUND, 'Session not found');
      }
      if (!ctx.message) return sendJsonRpcError(ctx.res, 400, null, JSONRPC_INVALID_REQUEST, 'Invalid Request: a JSON-RPC message is required');
      session.touch();
      forward(bridge, ctx, ctx.message, session, undefined);
    },
  };
}

/**
 * `<scheme>://<host><prefix>/messages?session_id=<id>` as ToolHive builds it: X-Forwarded-Proto is
 * always honoured; X-Forwarded-Host/Port/Prefix only with --trust-proxy-headers.
 */
function endpointUrl(ctx: ProxyContext, sessionId: string, options: LegacySseOptions): string {
  const h = ctx.req.headers;
  const tls = (ctx.req.socket as { encrypted?: boolean }).encrypted === true;
  const scheme = firstHeader(h['x-forwarded-proto'])?.split(',')[0]?.trim() || (tls ? 'https' : 'http');
  let host = firstHeader(h.host) ?? 'localhost';
  let prefix = '';
  if (options.trustProxyHeaders) {
    const fwdHost = firstHeader(h['x-forwarded-host'])?.split(',')[0]?.trim();
    if (fwdHost) host = fwdHost;
    const fwdPort = firstHeader(h['x-forwarded-port'])?.trim();
    if (fwdPort) host = `${host.replace(/:\d+$/, '')}:${fwdPort}`;
    prefix = (firstHeader(h['x-forwarded-prefix']) ?? '').replace(/\/+$/, '').replace(/\/sse$/, '');
    if (prefix && !prefix.startsWith('/')) prefix = `/${prefix}`;
  }
  return `${scheme}://${host}${prefix}/messages?session_id=${encodeURIComponent(sessionId)}`;
}
