/**
 * A deliberately lean newline-delimited JSON-RPC client over a child's stdin/stdout: no schema
 * validation, no per-request timers, one Map lookup per response. It exists to measure the stdio
 * server's own ceiling, so it should cost as little as possible.
 */
import type { Writable } from 'node:stream';
import { killGroup, spawnGroup, type Group } from './proc.js';

export interface RpcMessage {
  jsonrpc: '2.0';
  id?: number | string | null;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

interface Pending {
  resolve: (msg: RpcMessage) => void;
  reject: (err: Error) => void;
  sentAt: number;
}

export class LeanStdioClient {
  private readonly pending = new Map<number, Pending>();
  private readonly stdin: Writable;
  private nextId = 1;
  private buffer = '';
  private closed = false;
  private readonly sweeper: NodeJS.Timeout;
  /** Lines on stdout that were not JSON (counted, otherwise ignored). */
  junkLines = 0;

  private constructor(
    readonly group: Group,
    private readonly requestTimeoutMs: number,
  ) {
    const { stdin, stdout, stderr } = group.child;
    if (stdin === null || stdout === null || stderr === null) throw new Error('child has no stdio pipes');
    this.stdin = stdin;
    stdin.on('error', (err) => this.failAll(err));
    stdout.setEncoding('utf8');
    stdout.on('data', (chunk: string) => this.onData(chunk));
    stderr.resume(); // drained and discarded
    void group.exited.then(({ code, signal }) =>
      this.failAll(new Error(`server exited (code ${code ?? '-'}, signal ${signal ?? '-'})`)),
    );
    // One timer for all requests instead of one per request.
    this.sweeper = setInterval(() => this.sweep(), 1000);
    this.sweeper.unref();
  }

  /** Spawns `command args` in its own process group with piped stdio. */
  static spawn(command: string, args: readonly string[], requestTimeoutMs = 10_000): LeanStdioClient {
    const group = spawnGroup('direct stdio server', command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    return new LeanStdioClient(group, requestTimeoutMs);
  }

  request(method: string, params?: unknown): Promise<RpcMessage> {
    if (this.closed) return Promise.reject(new Error('client closed'));
    const id = this.nextId++;
    return new Promise<RpcMessage>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, sentAt: Date.now() });
      this.write({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method: string, params?: unknown): void {
    this.write(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  /** `initialize` + `notifications/initialized`; returns the initialize result. */
  async initialize(protocolVersion: string): Promise<unknown> {
    const res = await this.request('initialize', {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: 'thv-bench', version: '0.0.0' },
    });
    if (res.error !== undefined) throw new Error(`initialize failed: ${res.error.message}`);
    this.notify('notifications/initialized');
    return res.result;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.stdin.end();
    await killGroup(this.group, 2000);
    this.failAll(new Error('client closed'));
  }

  private write(msg: RpcMessage): void {
    this.stdin.write(JSON.stringify(msg) + '\n');
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let start = 0;
    for (let nl = this.buffer.indexOf('\n', start); nl !== -1; nl = this.buffer.indexOf('\n', start)) {
      const line = this.buffer.slice(start, nl);
      start = nl + 1;
      if (line.length > 0) this.onLine(line);
    }
    this.buffer = start === 0 ? this.buffer : this.buffer.slice(start);
  }

  private onLine(line: string): void {
    let msg: RpcMessage;
    try {
      msg = JSON.parse(line) as RpcMessage;
    } catch {
      this.junkLines++;
      return;
    }
    if (typeof msg.method === 'string') {
      // A server-initiated request needs an answer; notifications are ignored.
      if (msg.id !== undefined && msg.id !== null) {
        this.write(
          msg.method === 'ping'
            ? { jsonrpc: '2.0', id: msg.id, result: {} }
            : { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } },
        );
      }
      return;
    }
    if (typeof msg.id !== 'number') return;
    const p = this.pending.get(msg.id);
    if (p === undefined) return;
    this.pending.delete(msg.id);
    p.resolve(msg);
  }

  private sweep(): void {
    const cutoff = Date.now() - this.requestTimeoutMs;
    for (const [id, p] of this.pending) {
      if (p.sentAt <= cutoff) {
        this.pending.delete(id);
        p.reject(new Error(`request ${id} timed out`));
      }
    }
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}
