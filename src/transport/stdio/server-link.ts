import type { Logger } from '../../logging.js';
import { describeExit, type ExitInfo } from '../../runtime/process/stdio-process.js';
import type { ServerHandle } from '../../runtime/types.js';
import { sendRawJson } from '../http-util.js';
import {
  classify,
  errorMessage,
  idKey,
  JSONRPC_METHOD_NOT_FOUND,
  JSONRPC_SERVER_ERROR,
  type JsonRpcId,
  type JsonRpcMessage,
} from '../jsonrpc.js';
import { SseWriter } from '../sse-writer.js';
import type { Pending } from './pending.js';
import type { Session } from './session.js';

export type SessionMode = 'per-session' | 'shared';

export interface LinkOptions {
  mode: SessionMode;
  requestTimeoutMs: number;
  logger: Logger;
}

/**
 * One server process and the routing of everything it writes. In per-session mode the link serves a
 * single session and ids pass through untouched; in shared mode ids and progress tokens are rewritten
 * so that answers find their session, and messages that name no session are delivered only when there
 * is exactly one session they can belong to (never guessed).
 */
export class ServerLink {
  private proc: ServerHandle | undefined;
  readonly sessions = new Set<Session>();
  private readonly pending = new Map<string, Pending>();
  private readonly progress = new Map<string, Pending>();
  /** Shared mode: requests in flight that belong to no session (stateless callers). */
  private sessionless = 0;
  private nextId = 1;
  private stopping = false;
  private sweeper: NodeJS.Timeout | undefined;
  exited: ExitInfo | undefined;
  /** Called once when the process is gone, after every waiting request was answered. */
  onExit: ((info: ExitInfo) => void) | undefined;
  /** Called on the first message the server writes (proof of life for health reporting). */
  onActivity: (() => void) | undefined;

  constructor(private readonly options: LinkOptions) {}

  get mode(): SessionMode {
    return this.options.mode;
  }

  get process(): ServerHandle | undefined {
    return this.proc;
  }

  attach(proc: ServerHandle): void {
    this.proc = proc;
  }

  /** Line handler to give the StdioProcess. */
  readonly handleLine = (line: string): void => {
    let msg: JsonRpcMessage;
    try {
      msg = JSON.parse(line) as JsonRpcMessage;
    } catch {
      this.proc?.noteGarbage(line);
      return;
    }
    this.onActivity?.();
    const kind = classify(msg);
    if (kind === 'response') return this.onResponse(msg, line);
    if (kind === 'notification') return this.onNotification(msg, line);
    if (kind === 'request') return this.onServerRequest(msg, line);
    this.proc?.noteGarbage(line);
  };

  readonly handleExit = (info: ExitInfo): void => {
    this.exited = info;
    const reason = describeExit(info);
    const level = this.stopping ? 'debug' : 'warn';
    this.options.logger[level]({ pid: this.proc?.pid, code: info.code, signal: info.signal }, reason);
    for (const p of [...this.pending.values()]) {
      this.fail(p, 502, errorMessage(p.clientId, JSONRPC_SERVER_ERROR, reason));
    }
    for (const s of this.sessions) s.stream?.end();
    if (this.sweeper) clearInterval(this.sweeper);
    this.onExit?.(info);
  };

  get alive(): boolean {
    return this.proc !== undefined && this.exited === undefined;
  }

  /**
   * Sends a client request. `raw` is the body as received (used when nothing needs rewriting).
   */
  forwardRequest(p: Pending, message: JsonRpcMessage, raw: string | undefined): void {
    let outgoing = raw;
    if (this.options.mode === 'shared') {
      const upstreamId = this.nextId++;
      p.upstreamKey = idKey(upstreamId);
      p.idRewritten = true;
      const rewritten: JsonRpcMessage = { ...message, id: upstreamId };
      const token = progressTokenOf(message);
      if (token !== undefined) {
        const upstreamToken = `thv-p-${upstreamId}`;
        p.clientProgressToken = token;
        p.progressKey = idKey(upstreamToken);
        rewritten.params = withProgressToken(message.params as Record<string, unknown>, upstreamToken);
      }
      outgoing = JSON.stringify(rewritten);
    } else {
      const token = progressTokenOf(message);
      if (token !== undefined) p.progressKey = idKey(token);
      if (outgoing === undefined) outgoing = JSON.stringify(message);
    }
    this.pending.set(p.upstreamKey, p);
    if (p.progressKey !== undefined) this.progress.set(p.progressKey, p);
    if (p.session) {
      p.session.pending.add(p);
      if (this.options.mode === 'shared') p.session.byClientId.set(idKey(p.clientId), p);
    } else if (this.options.mode === 'shared') {
      this.sessionless++;
    }
    this.extendDeadline(p);
    this.proc!.send(outgoing);
  }

  /** True when a request with this id is in flight for the session (per-session mode ids pass through). */
  hasPending(key: string): boolean {
    return this.pending.has(key);
  }

  /** Sends a message that expects no answer (a notification, or the client's answer to a server request). */
  forwardMessage(line: string): void {
    this.proc?.send(line);
  }

  /** A request of the proxy itself (shared mode log levels, probes). */
  internalRequest(method: string, params: Record<string, unknown>, onAnswer: (m: JsonRpcMessage) => void): void {
    const id = `thv-${this.nextId++}`;
    const p: Pending = {
      upstreamKey: idKey(id), clientId: id, idRewritten: false, session: undefined, res: undefined,
      acceptJson: true, acceptSse: false, sse: undefined, headers: undefined, transforms: [], ctx: undefined,
      progressKey: undefined, clientProgressToken: undefined, deadline: 0,
      onAnswer, done: false,
    };
    this.pending.set(p.upstreamKey, p);
    this.extendDeadline(p);
    this.proc?.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  }

  private onResponse(msg: JsonRpcMessage, line: string): void {
    const key = msg.id === null || msg.id === undefined ? undefined : idKey(msg.id);
    const p = key === undefined ? undefined : this.pending.get(key);
    if (!p) {
      this.options.logger.debug({ id: msg.id }, 'dropping a response nobody waits for');
      return;
    }
    this.settle(p);
    if (p.onAnswer) return p.onAnswer(msg);
    this.answer(p, msg, line);
  }

  private onNotification(msg: JsonRpcMessage, line: string): void {
    const method = msg.method!;
    if (method === 'notifications/progress') {
      const token = (msg.params as Record<string, unknown> | undefined)?.progressToken;
      if (typeof token === 'string' || typeof token === 'number') {
        const p = this.progress.get(idKey(token));
        if (p && !p.done) {
          let json = line;
          if (p.idRewritten && p.clientProgressToken !== undefined) {
            json = JSON.stringify({ ...msg, params: { ...(msg.params as object), progressToken: p.clientProgressToken } });
          }
          this.streamToRequest(p, json, true);
          return;
        }
      }
      return; // progress for a request that is over: nothing to do
    }
    if (method === 'notifications/cancelled') {
      // The server gave up a request it had sent (e.g. a sampling request): tell the session that had it.
      return this.deliverUnattributed(msg, line, false);
    }
    if (method.endsWith('/list_changed')) {
      for (const s of this.sessions) s.deliverToStream(line);
      return;
    }
    if (method === 'notifications/resources/updated') {
      const uri = (msg.params as Record<string, unknown> | undefined)?.uri;
      if (this.options.mode === 'shared' && typeof uri === 'string') {
        for (const s of this.sessions) if (s.subscriptions.has(uri)) s.deliverToStream(line);
        return;
      }
      return this.deliverUnattributed(msg, line, false);
    }
    return this.deliverUnattributed(msg, line, true);
  }

  private onServerRequest(msg: JsonRpcMessage, line: string): void {
    const session = this.soleSession();
    if (!session) {
      this.proc?.send(
        JSON.stringify(
          errorMessage(
            msg.id as JsonRpcId,
            JSONRPC_METHOD_NOT_FOUND,
            `server-initiated ${msg.method} cannot be routed: several clients share this server process (run with --stdio-sessions per-session)`,
          ),
        ),
      );
      return;
    }
    if (this.options.mode === 'shared') session.serverRequests.add(idKey(msg.id as JsonRpcId));
    session.deliverWhileWorking(line, (p, json) => this.streamToRequest(p, json, false));
  }

  private deliverUnattributed(msg: JsonRpcMessage, line: string, whileWorking: boolean): void {
    const session = this.soleSession();
    if (!session) {
      this.options.logger.debug({ method: msg.method }, 'dropping a server notification that names no session');
      return;
    }
    if (whileWorking) session.deliverWhileWorking(line, (p, json) => this.streamToRequest(p, json, false));
    else session.deliverToStream(line);
  }

  /** The one session every unattributed message must belong to, if there is exactly one. */
  private soleSession(): Session | undefined {
    if (this.sessions.size !== 1 || this.sessionless > 0) return undefined;
    const [only] = this.sessions;
    return only!.closed ? undefined : only;
  }

  /**
   * Streams a message on the answer of request `p` (switching it to SSE). Returns false when it cannot
   * (client does not accept SSE); `fallback` then sends it to the session's stream.
   */
  private streamToRequest(p: Pending, json: string, fallback: boolean): boolean {
    if (p.res && !p.res.writableEnded) {
      if (!p.sse && p.acceptSse && !p.res.headersSent) p.sse = new SseWriter(p.res, p.headers);
      if (p.sse) {
        p.sse.message(json);
        this.extendDeadline(p);
        return true;
      }
    } else if (!p.res && p.session) {
      p.session.deliverToStream(json);
      return true;
    }
    if (fallback && p.session) {
      p.session.deliverToStream(json);
      return true;
    }
    return false;
  }

  private answer(p: Pending, msg: JsonRpcMessage, line: string): void {
    let json = line;
    if (p.idRewritten || p.transforms.length > 0) {
      let out: JsonRpcMessage = p.idRewritten ? { ...msg, id: p.clientId } : msg;
      for (let i = p.transforms.length - 1; i >= 0; i--) out = p.transforms[i]!(out);
      json = JSON.stringify(out);
    }
    this.deliverAnswer(p, json, 200);
  }

  private deliverAnswer(p: Pending, json: string, status: number): void {
    const res = p.res;
    if (!res) {
      p.session?.deliverToStream(json);
      return;
    }
    if (res.writableEnded || res.destroyed) return;
    if (p.sse) {
      p.sse.message(json);
      p.sse.end();
    } else if (p.acceptJson || !p.acceptSse || status !== 200) {
      if (p.ctx !== undefined) p.ctx.answerJson = json;
      sendRawJson(res, status, json, p.headers);
    } else {
      const sse = new SseWriter(res, p.headers);
      sse.message(json);
      sse.end();
    }
  }

  private fail(p: Pending, status: number, msg: JsonRpcMessage): void {
    if (p.done) return;
    this.settle(p);
    if (p.onAnswer) return p.onAnswer(msg);
    this.deliverAnswer(p, JSON.stringify(msg), status);
  }

  /** Removes `p` from every index. */
  private settle(p: Pending): void {
    p.done = true;
    this.pending.delete(p.upstreamKey);
    if (p.progressKey !== undefined) this.progress.delete(p.progressKey);
    if (p.session) {
      p.session.pending.delete(p);
      if (this.options.mode === 'shared') p.session.byClientId.delete(idKey(p.clientId));
    } else if (this.options.mode === 'shared' && !p.onAnswer) {
      this.sessionless--;
    }
  }

  /**
   * Deadlines instead of a timer per request: one sweep a second over what is in flight costs less on
   * the hot path than arming and clearing a timer for every message.
   */
  private extendDeadline(p: Pending): void {
    p.deadline = Date.now() + this.options.requestTimeoutMs;
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweepDeadlines(), Math.min(1000, this.options.requestTimeoutMs));
      this.sweeper.unref();
    }
  }

  private sweepDeadlines(): void {
    const now = Date.now();
    for (const p of this.pending.values()) if (p.deadline <= now) this.onTimeout(p);
  }

  private onTimeout(p: Pending): void {
    if (p.done) return;
    const upstreamId = parseKey(p.upstreamKey);
    this.fail(p, 504, errorMessage(p.clientId, JSONRPC_SERVER_ERROR, `Timed out after ${this.options.requestTimeoutMs} ms waiting for the MCP server's answer`));
    // Tell the server to stop working on it.
    this.proc?.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: upstreamId, reason: 'timeout in proxy' } }));
  }

  /** Answers every request of a session that goes away, and forgets the session. */
  dropSession(session: Session): void {
    session.closed = true;
    this.sessions.delete(session);
    for (const p of [...session.pending]) {
      this.fail(p, 404, errorMessage(p.clientId, JSONRPC_SERVER_ERROR, 'Session terminated'));
    }
    session.stream?.end();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    await this.proc?.stop();
  }
}

function progressTokenOf(message: JsonRpcMessage): JsonRpcId | undefined {
  const params = message.params as Record<string, unknown> | undefined;
  const meta = params?._meta as Record<string, unknown> | undefined;
  const token = meta?.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

function withProgressToken(params: Record<string, unknown>, token: string): Record<string, unknown> {
  return { ...params, _meta: { ...(params._meta as Record<string, unknown>), progressToken: token } };
}

function parseKey(key: string): JsonRpcId {
  return key.startsWith('n:') ? Number(key.slice(2)) : key.slice(2);
}
