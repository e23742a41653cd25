import type { ProxyContext } from '../../middleware/types.js';
import { accepts, firstHeader, sendJsonRpcError, sendRawJson, sendText } from '../http-util.js';
import {
  errorMessage,
  idKey,
  JSONRPC_INVALID_REQUEST,
  JSONRPC_SERVER_ERROR,
  JSONRPC_SESSION_NOT_FOUND,
  type JsonRpcId,
  type JsonRpcMessage,
} from '../jsonrpc.js';
import { classifyRevision, KNOWN_PROTOCOL_VERSIONS, type RevisionError } from '../revision.js';
import { SseWriter } from '../sse-writer.js';
import type { StdioBridge } from './bridge.js';
import type { Pending } from './pending.js';
import type { Session } from './session.js';

const SESSION_HEADER = 'mcp-session-id';
const PROTOCOL_VERSION_HEADER = 'mcp-protocol-version';

/** A refused Modern request: 400 with the draft schema's JSON-RPC code and data, the request id echoed. */
function sendRevisionError(ctx: ProxyContext, id: JsonRpcId | undefined, error: RevisionError): void {
  sendRawJson(ctx.res, 400, JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error }));
}

/**
 * Streamable HTTP (`/mcp`) in front of the stdio bridge: POST carries client messages, GET opens the
 * session's stream, DELETE ends the session. Answers are JSON unless the server streams something
 * first (progress, logging, a sampling request), in which case the answer becomes an SSE stream.
 */
export interface StreamableOptions {
  strictProtocolValidation?: boolean;
}

export function streamableHandler(bridge: StdioBridge, options: StreamableOptions = {}): (ctx: ProxyContext) => Promise<void> {
  return async (ctx) => {
    if (options.strictProtocolValidation) {
      const version = firstHeader(ctx.req.headers[PROTOCOL_VERSION_HEADER]);
      if (version !== undefined && !KNOWN_PROTOCOL_VERSIONS.has(version)) {
        return sendText(ctx.res, 400, 'Unsupported MCP-Protocol-Version');
      }
    }
    switch (ctx.req.method) {
      case 'POST':
        return post(bridge, ctx);
      case 'GET':
        return openStream(bridge, ctx);
      case 'DELETE':
        return remove(bridge, ctx);
      default:
        return sendText(ctx.res, 405, 'Method not allowed', { Allow: 'GET, POST, DELETE' });
    }
  };
}

function sessionNotFound(ctx: ProxyContext, id: JsonRpcId | undefined): void {
  sendJsonRpcError(ctx.res, 404, id, JSONRPC_SESSION_NOT_FOUND, 'Session not found');
}

async function post(bridge: StdioBridge, ctx: ProxyContext): Promise<void> {
  const msg = ctx.message;
  const call = ctx.mcp;
  if (!msg || !call) return sendJsonRpcError(ctx.res, 400, null, JSONRPC_INVALID_REQUEST, 'Invalid Request: a JSON-RPC message is required');
  let sessionId = firstHeader(ctx.req.headers[SESSION_HEADER]);
  let session: Session | undefined;
  let newSessionHeaders: Record<string, string> | undefined;

  if (call.kind === 'request') {
    const revision = classifyRevision(call.method, call.params, firstHeader(ctx.req.headers[PROTOCOL_VERSION_HEADER]));
    if ('error' in revision) return sendRevisionError(ctx, call.id, revision.error);
    // Modern requests are stateless: a session id they carry is ignored, none is created.
    if (revision.era === 'modern') sessionId = undefined;
  }

  if (call.kind === 'request' && call.method === 'initialize' && sessionId === undefined) {
    const created = bridge.createSession('streamable');
    if ('error' in created) {
      return sendJsonRpcError(ctx.res, created.error === 'too-many-sessions' ? 503 : 502, call.id, JSONRPC_SERVER_ERROR, created.message);
    }
    session = created.session;
    newSessionHeaders = { 'Mcp-Session-Id': session.id };
  } else if (sessionId !== undefined) {
    session = bridge.sessions.get(sessionId);
    if (!session || session.closed) return sessionNotFound(ctx, call.kind === 'request' ? call.id : undefined);
    if (session.kind !== 'streamable') return sessionNotFound(ctx, call.id);
  }
  // Without a session the message goes to the bridge's sessionless server process (stateless callers).
  session?.touch();
  return forward(bridge, ctx, msg, session, newSessionHeaders);
}

/** Hands a client message to the server process of its session; shared by Streamable HTTP and legacy SSE. */
export function forward(
  bridge: StdioBridge,
  ctx: ProxyContext,
  msg: JsonRpcMessage,
  session: Session | undefined,
  newSessionHeaders: Record<string, string> | undefined,
): void {
  const call = ctx.mcp!;
  const link = session ? session.link : bridge.sessionlessLink();
  const shared = bridge.mode === 'shared';
  const streamable = session === undefined || session.kind === 'streamable';
  const accepted = (): void => {
    if (streamable) {
      ctx.res.writeHead(202).end();
    } else {
      sendText(ctx.res, 202, 'Accepted');
    }
  };
  if (!link.alive) {
    return sendJsonRpcError(ctx.res, 502, call.id ?? null, JSONRPC_SERVER_ERROR, 'MCP server is not running');
  }

  // Ids are rewritten on a shared link: the shared process, or the sessionless one of per-session mode.
  const rewriting = link.mode === 'shared';
  if (call.kind === 'notification') {
    if (call.method === 'notifications/initialized') {
      // The sessionless process of per-session mode was initialised by the proxy itself.
      if (!shared && !session) return accepted();
      if (shared) {
        if (bridge.sharedInitializedSent) return accepted();
        bridge.sharedInitializedSent = true;
      }
    }
    if (rewriting && call.method === 'notifications/cancelled') {
      // Without a session the request id cannot be told apart from another caller's: never forwarded.
      if (!session) return accepted();
      const rid = (call.params as Record<string, unknown> | undefined)?.requestId;
      const p = typeof rid === 'string' || typeof rid === 'number' ? session.byClientId.get(idKey(rid)) : undefined;
      if (!p) return accepted();
      link.forwardMessage(JSON.stringify({ ...msg, params: { ...call.params, requestId: Number(p.upstreamKey.slice(2)) } }));
      return accepted();
    }
    link.forwardMessage(lineOf(ctx, msg));
    return accepted();
  }

  if (call.kind === 'response') {
    if (rewriting) {
      const key = msg.id === null || msg.id === undefined ? '' : idKey(msg.id);
      if (!session || !session.serverRequests.delete(key)) {
        return sendJsonRpcError(ctx.res, 400, null, JSONRPC_INVALID_REQUEST, 'This session has no server request with that id');
      }
    }
    link.forwardMessage(lineOf(ctx, msg));
    return accepted();
  }

  const id = call.id as JsonRpcId;
  if (!rewriting && link.hasPending(idKey(id))) {
    return sendJsonRpcError(ctx.res, 400, id, JSONRPC_INVALID_REQUEST, 'Invalid Request: a request with this id is still in flight in this session');
  }
  if (shared && session && answeredLocally(bridge, ctx, session, msg, newSessionHeaders)) return;

  const accept = acceptsOf(firstHeader(ctx.req.headers.accept));
  const p: Pending = {
    upstreamKey: idKey(id),
    clientId: id,
    idRewritten: false,
    session,
    res: streamable ? ctx.res : undefined,
    acceptJson: accept.json,
    acceptSse: accept.sse,
    sse: undefined,
    headers: newSessionHeaders,
    transforms: ctx.responseTransforms,
    ctx: streamable ? ctx : undefined,
    progressKey: undefined,
    clientProgressToken: undefined,
    deadline: 0,
    onAnswer: undefined,
    done: false,
  };
  if (newSessionHeaders && session) {
    // A failed initialize leaves no session behind.
    const s = session;
    p.transforms = [...p.transforms, (m) => {
      if (m.error) setImmediate(() => bridge.closeSession(s));
      return m;
    }];
  }
  if (shared && call.method === 'initialize') trackSharedInitialize(bridge, p);
  if (shared && call.method === 'resources/subscribe' && session) trackSubscription(bridge, session, call.resourceId, p);
  if (!streamable) accepted();
  link.forwardRequest(p, msg, ctx.messageChanged ? undefined : lineOf(ctx, msg));
}

/** Clients send the same Accept header over and over: parse each distinct value once. */
const acceptCache = new Map<string, { json: boolean; sse: boolean }>();
function acceptsOf(header: string | undefined): { json: boolean; sse: boolean } {
  if (header === undefined) return { json: true, sse: false };
  let parsed = acceptCache.get(header);
  if (!parsed) {
    parsed = { json: accepts(header, 'application/json'), sse: accepts(header, 'text/event-stream') };
    if (acceptCache.size > 64) acceptCache.clear();
    acceptCache.set(header, parsed);
  }
  return parsed;
}

/** The message as one line for the server's stdin: the received bytes unless a stage changed it. */
function lineOf(ctx: ProxyContext, msg: JsonRpcMessage): string {
  if (ctx.messageChanged || !ctx.body) return JSON.stringify(msg);
  const text = ctx.body.toString('utf8');
  // Raw CR/LF can only be whitespace between JSON tokens (inside strings they must be escaped).
  return text.includes('\n') || text.includes('\r') ? text.replace(/[\r\n]+/g, ' ') : text;
}

/** Shared mode: what ToolHive answers without the server (repeated initialize, subscriptions, log level). */
function answeredLocally(
  bridge: StdioBridge,
  ctx: ProxyContext,
  session: Session,
  msg: JsonRpcMessage,
  headers: Record<string, string> | undefined,
): boolean {
  const call = ctx.mcp!;
  const id = call.id as JsonRpcId;
  const reply = (result: unknown): void => {
    let out: JsonRpcMessage = { jsonrpc: '2.0', id, result };
    for (let i = ctx.responseTransforms.length - 1; i >= 0; i--) out = ctx.responseTransforms[i]!(out);
    const json = JSON.stringify(out);
    if (session.kind === 'legacy-sse') {
      sendText(ctx.res, 202, 'Accepted');
      session.deliverToStream(json);
    } else {
      ctx.answerJson = json;
      sendRawJson(ctx.res, 200, json, headers);
    }
  };
  switch (call.method) {
    case 'initialize':
      if (bridge.sharedInit) {
        reply(bridge.sharedInit.result);
        return true;
      }
      if (bridge.sharedInitWaiters) {
        bridge.sharedInitWaiters.push((answer) => {
          if (answer.result !== undefined) reply(answer.result);
          else if (session.kind === 'legacy-sse') session.deliverToStream(JSON.stringify(errorMessage(id, JSONRPC_SERVER_ERROR, 'initialize failed')));
          else sendJsonRpcError(ctx.res, 502, id, JSONRPC_SERVER_ERROR, 'initialize failed');
        });
        return true;
      }
      return false;
    case 'resources/subscribe': {
      const uri = call.resourceId;
      if (uri === undefined || session.subscriptions.has(uri)) return false;
      if (bridge.subscriptionCounts.has(uri)) {
        bridge.holdSubscription(uri);
        session.subscriptions.add(uri);
        reply({});
        return true;
      }
      return false;
    }
    case 'resources/unsubscribe': {
      const uri = call.resourceId;
      if (uri === undefined || !session.subscriptions.delete(uri)) {
        reply({});
        return true;
      }
      if (!bridge.releaseSubscription(uri)) {
        reply({});
        return true;
      }
      return false;
    }
    case 'logging/setLevel': {
      const level = (call.params as Record<string, unknown> | undefined)?.level;
      if (typeof level === 'string') session.logLevel = level;
      const wanted = mostVerbose([...bridge.sessions.values()].map((s) => s.logLevel));
      if (wanted) session.link.internalRequest('logging/setLevel', { level: wanted }, () => {});
      reply({});
      return true;
    }
    default:
      return false;
  }
}

function trackSharedInitialize(bridge: StdioBridge, p: Pending): void {
  bridge.sharedInitWaiters = [];
  p.transforms = [...p.transforms, (m) => {
    const waiters = bridge.sharedInitWaiters ?? [];
    bridge.sharedInitWaiters = undefined;
    if (m.result !== undefined) bridge.sharedInit = { result: m.result };
    for (const w of waiters) w(m.result !== undefined ? { result: m.result } : { error: m.error });
    return m;
  }];
}

function trackSubscription(bridge: StdioBridge, session: Session, uri: string | undefined, p: Pending): void {
  if (uri === undefined) return;
  p.transforms = [...p.transforms, (m) => {
    if (m.result !== undefined && !session.subscriptions.has(uri)) {
      session.subscriptions.add(uri);
      bridge.holdSubscription(uri);
    }
    return m;
  }];
}

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
function mostVerbose(levels: Array<string | undefined>): string | undefined {
  let best = -1;
  for (const l of levels) {
    const i = l === undefined ? -1 : LEVELS.indexOf(l);
    if (i >= 0 && (best < 0 || i < best)) best = i;
  }
  return best < 0 ? undefined : LEVELS[best];
}

async function openStream(bridge: StdioBridge, ctx: ProxyContext): Promise<void> {
  const accept = firstHeader(ctx.req.headers.accept);
  if (!accepts(accept, 'text/event-stream')) {
    return sendJsonRpcError(ctx.res, 406, null, JSONRPC_INVALID_REQUEST, 'Not Acceptable: the client must accept text/event-stream');
  }
  const sessionId = firstHeader(ctx.req.headers[SESSION_HEADER]);
  if (sessionId === undefined) {
    return sendJsonRpcError(ctx.res, 400, null, JSONRPC_INVALID_REQUEST, 'Bad Request: Mcp-Session-Id header is required');
  }
  const session = bridge.sessions.get(sessionId);
  if (!session || session.closed || session.kind !== 'streamable') return sessionNotFound(ctx, undefined);
  session.touch();
  const stream: SseWriter = new SseWriter(ctx.res, {}, {
    keepalive: true,
    onClose: () => {
      if (session.stream === stream) session.stream = undefined;
    },
  });
  session.attachStream(stream);
}

async function remove(bridge: StdioBridge, ctx: ProxyContext): Promise<void> {
  const sessionId = firstHeader(ctx.req.headers[SESSION_HEADER]);
  if (sessionId === undefined) {
    return sendJsonRpcError(ctx.res, 400, null, JSONRPC_INVALID_REQUEST, 'Bad Request: Mcp-Session-Id header is required');
  }
  const session = bridge.sessions.get(sessionId);
  if (!session || session.kind !== 'streamable') return sessionNotFound(ctx, undefined);
  bridge.closeSession(session);
  ctx.res.writeHead(204).end();
}
