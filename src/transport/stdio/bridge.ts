import { randomUUID } from 'node:crypto';
import type { Logger } from '../../logging.js';
import { ErrorCodes, ThvError } from '../../errors.js';
import { describeExit, StdioProcess, type ExitInfo, type ProcessSpec } from '../../runtime/process/stdio-process.js';
import type { Runtime } from '../../runtime/types.js';
import { ServerLink, type SessionMode } from './server-link.js';
import { Session } from './session.js';
import { VERSION } from '../../version.js';

/** What the proxy asks for when it initialises the sessionless process of per-session mode. */
const STATELESS_PROTOCOL_VERSION = '2025-11-25';

export interface StdioBridgeOptions {
  spec: ProcessSpec;
  /** Launches server instances (a container runtime); without it `spec` runs as a child process. */
  runtime?: Runtime;
  mode: SessionMode;
  sessionTtlMs: number;
  maxSessions: number;
  requestTimeoutMs: number;
  logger: Logger;
}

export type SessionResult = { session: Session } | { error: 'too-many-sessions' | 'server-unavailable'; message: string };

/**
 * Owns the server processes behind the stdio bridge and the client sessions on them.
 * per-session: every session gets its own process (one spare is kept warm, so a new session does not
 * wait for a cold start); shared: one process for all sessions, as ToolHive does.
 */
export class StdioBridge {
  readonly sessions = new Map<string, Session>();
  private spare: ServerLink | undefined;
  private shared: ServerLink | undefined;
  /** Per-session mode: the process that serves callers without a session (stateless and Modern requests). */
  private stateless: ServerLink | undefined;
  /** Shared mode: the first initialize's answer, replayed to later sessions. */
  sharedInit: { result: unknown } | undefined;
  sharedInitWaiters: Array<(answer: { result?: unknown; error?: unknown }) => void> | undefined;
  sharedInitializedSent = false;
  /** Shared mode: how many sessions hold a subscription per URI. */
  readonly subscriptionCounts = new Map<string, number>();
  lastExit: ExitInfo | undefined;
  lastExitAt: number | undefined;
  private answeredSinceExit = true;
  private sweeper: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(readonly options: StdioBridgeOptions) {}

  get mode(): SessionMode {
    return this.options.mode;
  }

  /** Starts the first process and fails when the OS cannot start the command at all. */
  async start(): Promise<void> {
    const link = this.spawnLink();
    if (this.options.mode === 'shared') this.shared = link;
    else this.spare = link;
    try {
      await link.process!.spawned;
    } catch (err) {
      throw new ThvError(ErrorCodes.ServerStartFailed, (err as Error).message, {
        hint: 'check the command and that it is installed and executable',
      });
    }
    const every = Math.max(1000, Math.min(this.options.sessionTtlMs / 2, 60_000));
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  createSession(kind: Session['kind']): SessionResult {
    if (this.sessions.size >= this.options.maxSessions) {
      return { error: 'too-many-sessions', message: `Too many sessions: the limit is ${this.options.maxSessions} (see --max-sessions)` };
    }
    const link = this.options.mode === 'shared' ? this.sharedLink() : this.claimLink();
    if (!link.alive) {
      return { error: 'server-unavailable', message: link.exited ? describeExit(link.exited) : 'MCP server is not running' };
    }
    const session = new Session(randomUUID(), link, kind);
    link.sessions.add(session);
    this.sessions.set(session.id, session);
    return { session };
  }

  /** Shared mode: the link for requests that carry no session. */
  sharedLink(): ServerLink {
    if (!this.shared || this.shared.exited) {
      this.shared = this.spawnLink();
    }
    return this.shared;
  }

  /**
   * The link for messages that carry no session: Modern (stateless) requests, and legacy callers that
   * skip the handshake, as ToolHive serves them. In shared mode that is the shared process. In
   * per-session mode it is a process of its own, never one a session owns, with ids rewritten as in
   * shared mode (callers' ids may collide); the proxy initialises it itself, because servers may refuse
   * requests before the handshake and a stateless caller never sends one.
   */
  sessionlessLink(): ServerLink {
    if (this.options.mode === 'shared') return this.sharedLink();
    if (!this.stateless || this.stateless.exited) {
      const link = this.spawnLink('shared');
      link.internalRequest(
        'initialize',
        { protocolVersion: STATELESS_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'thv-stateless', version: VERSION } },
        (answer) => {
          if (answer.error !== undefined) this.options.logger.warn({ error: answer.error }, 'the server refused the proxy\'s initialize for stateless callers');
        },
      );
      link.forwardMessage(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      this.stateless = link;
    }
    return this.stateless;
  }

  closeSession(session: Session): void {
    if (session.closed) return;
    this.sessions.delete(session.id);
    session.link.dropSession(session);
    if (this.options.mode === 'shared') {
      for (const uri of session.subscriptions) this.releaseSubscription(uri);
    } else {
      void session.link.stop();
    }
  }

  /** Shared mode: count a subscription; true when it is the first (and must reach the server). */
  holdSubscription(uri: string): boolean {
    const n = (this.subscriptionCounts.get(uri) ?? 0) + 1;
    this.subscriptionCounts.set(uri, n);
    return n === 1;
  }

  /** Shared mode: release a subscription; true when it was the last (and must reach the server). */
  releaseSubscription(uri: string): boolean {
    const n = (this.subscriptionCounts.get(uri) ?? 0) - 1;
    if (n <= 0) {
      this.subscriptionCounts.delete(uri);
      return n === 0;
    }
    this.subscriptionCounts.set(uri, n);
    return false;
  }

  health(): { healthy: boolean; error?: string; sessions: number } {
    const recentExit = this.lastExit !== undefined && !this.answeredSinceExit;
    const sharedDown = this.options.mode === 'shared' && this.shared?.exited !== undefined;
    if (recentExit || sharedDown) {
      return { healthy: false, error: describeExit(this.lastExit!), sessions: this.sessions.size };
    }
    return { healthy: true, sessions: this.sessions.size };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    const links = new Set<ServerLink>();
    for (const s of this.sessions.values()) links.add(s.link);
    for (const s of [...this.sessions.values()]) {
      this.sessions.delete(s.id);
      s.link.dropSession(s);
    }
    if (this.spare) links.add(this.spare);
    if (this.shared) links.add(this.shared);
    if (this.stateless) links.add(this.stateless);
    await Promise.all([...links].map((l) => l.stop()));
  }

  private claimLink(): ServerLink {
    let link = this.spare;
    this.spare = undefined;
    if (!link || link.exited) link = this.spawnLink();
    // Keep the next session's process warm, unless the server keeps dying before use.
    if (!this.stopping && this.answeredSinceExit) {
      setImmediate(() => {
        if (!this.spare && !this.stopping) this.spare = this.spawnLink();
      });
    }
    return link;
  }

  private spawnLink(mode: SessionMode = this.options.mode): ServerLink {
    const { spec, requestTimeoutMs, logger } = this.options;
    const link = new ServerLink({ mode, requestTimeoutMs, logger });
    const proc = this.options.runtime
      ? this.options.runtime.launch({ onLine: link.handleLine, onExit: link.handleExit }, logger)
      : new StdioProcess(spec, logger, link.handleLine, link.handleExit);
    link.attach(proc);
    link.onActivity = () => {
      this.answeredSinceExit = true;
      link.onActivity = undefined;
    };
    link.onExit = (info) => {
      if (this.stopping) return;
      const expected = mode === 'per-session' && link.sessions.size === 0 && link !== this.spare;
      if (link === this.stateless) this.stateless = undefined;
      if (!expected) {
        this.lastExit = info;
        this.lastExitAt = Date.now();
        this.answeredSinceExit = false;
      }
      if (link === this.spare) this.spare = undefined;
      for (const s of [...link.sessions]) {
        this.sessions.delete(s.id);
        s.closed = true;
      }
      link.sessions.clear();
      if (link === this.shared) {
        this.sharedInit = undefined;
        this.sharedInitializedSent = false;
        this.subscriptionCounts.clear();
      }
    };
    logger.debug({ pid: proc.pid, mode }, 'started MCP server process');
    return link;
  }

  private sweep(): void {
    const cutoff = Date.now() - this.options.sessionTtlMs;
    for (const s of [...this.sessions.values()]) {
      if (s.lastSeen < cutoff && s.pending.size === 0 && !(s.stream && !s.stream.closed)) {
        this.options.logger.info({ session: s.id }, 'session expired');
        this.closeSession(s);
      }
    }
  }
}
