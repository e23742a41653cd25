import type { SseWriter } from '../sse-writer.js';
import type { Pending } from './pending.js';
import type { ServerLink } from './server-link.js';

const MAX_QUEUED = 100;

/**
 * One client session of the bridge. Messages the server sends outside a request's answer go to the
 * session's stream (the Streamable HTTP GET stream, or the legacy SSE connection); while no stream is
 * open they wait in a bounded queue, delivered when one opens.
 */
export class Session {
  readonly pending = new Set<Pending>();
  /** Shared mode: client request ids in flight (for notifications/cancelled), by id key. */
  readonly byClientId = new Map<string, Pending>();
  /** Shared mode: ids of server-to-client requests this session was asked, so only it may answer. */
  readonly serverRequests = new Set<string>();
  /** Shared mode: resource URIs this session subscribed to. */
  readonly subscriptions = new Set<string>();
  logLevel: string | undefined;
  stream: SseWriter | undefined;
  lastSeen = Date.now();
  closed = false;
  private queue: string[] = [];
  dropped = 0;

  constructor(
    readonly id: string,
    readonly link: ServerLink,
    readonly kind: 'streamable' | 'legacy-sse',
  ) {}

  touch(): void {
    this.lastSeen = Date.now();
  }

  /** For messages tied to no request (resource updates, list changes). */
  deliverToStream(json: string): void {
    if (this.closed) return;
    if (this.stream && !this.stream.closed) {
      this.stream.message(json);
      return;
    }
    this.enqueue(json);
  }

  /**
   * For messages the server sent while working (server requests, logging) without saying for which
   * request: they belong to this session, so the newest answer that can stream carries them; else the
   * session's stream.
   */
  deliverWhileWorking(json: string, streamInto: (p: Pending, json: string) => boolean): void {
    if (this.closed) return;
    if (this.kind === 'streamable') {
      let newest: Pending | undefined;
      for (const p of this.pending) if (p.res && !p.done && p.acceptSse && !p.res.writableEnded) newest = p;
      if (newest && streamInto(newest, json)) return;
    }
    this.deliverToStream(json);
  }

  attachStream(stream: SseWriter): void {
    const previous = this.stream;
    this.stream = stream;
    if (previous && previous !== stream) previous.end();
    const queued = this.queue;
    this.queue = [];
    for (const json of queued) stream.message(json);
  }

  private enqueue(json: string): void {
    this.queue.push(json);
    if (this.queue.length > MAX_QUEUED) {
      this.queue.shift();
      this.dropped++;
    }
  }
}
