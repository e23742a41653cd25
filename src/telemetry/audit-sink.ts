/**
 * Where audit lines go. Writes never block a request: lines are queued and written in batches by one
 * background writer. The file sink survives log rotation: it watches the open file (inotify) and, as a
 * fallback for file systems without notifications, compares the path's inode with the open file's once
 * a second; when the file was renamed or removed, the next batch reopens the path. Nothing of this runs
 * per request.
 */
import { close as closeCb, closeSync, constants, fstatSync, openSync, promises as fsp, watch, write as writeCb, type FSWatcher } from 'node:fs';
import { promisify } from 'node:util';
import { ErrorCodes, ThvError } from '../errors.js';
import type { Logger } from '../logging.js';
import { auditEntryText, type AuditEntry } from './audit-event.js';

const writeFd = promisify(writeCb) as ((fd: number, data: string) => Promise<{ bytesWritten: number }>) &
  ((fd: number, data: Uint8Array) => Promise<{ bytesWritten: number }>);
const closeFd = promisify(closeCb);
const OPEN_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT;

export interface AuditSink {
  /** Queues one event: its line (without the newline) or the parts of its line. */
  write(entry: AuditEntry): void;
  /** Writes what is queued; resolves when it is on disk (or on stdout). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** What an unrendered event is counted as against MAX_QUEUED_BYTES (a typical line is 400–600 bytes). */
const ENTRY_SIZE_ESTIMATE = 512;
/** Above this many queued bytes new lines are dropped (and counted) instead of growing memory without bound. */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;
/** How long lines are collected before they are written. */
const BATCH_DELAY_MS = 20;
/** Fallback rotation check for file systems without change notifications. */
const ROTATION_CHECK_MS = 1000;

export class FileAuditSink implements AuditSink {
  private queue: AuditEntry[] = [];
  private queuedBytes = 0;
  private dropped = 0;
  private fd: number | undefined;
  private ino = -1;
  private writing: Promise<void> | undefined;
  private closed = false;
  /** Set when the path may no longer name the open file; the next batch reopens it. */
  private stale = false;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly path: string,
    private readonly logger: Logger,
  ) {}

  /** Opens (creating with mode 0600) synchronously, so that a bad path fails at start-up, not at the first request. */
  open(): void {
    this.fd = openSync(this.path, OPEN_FLAGS, 0o600);
    this.ino = fstatSync(this.fd).ino;
    this.watchFile();
    this.timer = setInterval(() => void this.checkPath(), ROTATION_CHECK_MS);
    this.timer.unref();
  }

  private watchFile(): void {
    this.watcher?.close();
    this.watcher = undefined;
    try {
      this.watcher = watch(this.path, { persistent: false }, (event) => {
        if (event === 'rename') this.stale = true;
      });
      this.watcher.on('error', () => {
        this.stale = true;
      });
    } catch {
      // No notifications here: the periodic check covers it.
    }
  }

  private async checkPath(): Promise<void> {
    if (this.stale || this.closed) return;
    try {
      if ((await fsp.stat(this.path)).ino !== this.ino) this.stale = true;
    } catch {
      this.stale = true;
    }
  }

  write(entry: AuditEntry): void {
    if (this.closed) return;
    if (this.queuedBytes > MAX_QUEUED_BYTES) {
      this.dropped++;
      return;
    }
    this.queue.push(entry);
    this.queuedBytes += typeof entry === 'string' ? entry.length + 1 : ENTRY_SIZE_ESTIMATE;
    if (this.writing === undefined) this.writing = this.drain();
  }

  async flush(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    clearInterval(this.timer);
    this.watcher?.close();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private async drain(): Promise<void> {
    // Collect lines for a short while before EVERY write, so that one write carries many: a write per
    // request costs a thread-pool round trip each (measured: the largest part of the audit cost under
    // load). Writing the next batch as soon as the last one is done would, under load, shrink batches
    // back to a few lines each; so at most one write per BATCH_DELAY_MS.
    try {
      while (this.queue.length > 0) {
        await new Promise<void>((r) => setTimeout(r, BATCH_DELAY_MS));
        const batch = this.queue;
        this.queue = [];
        this.queuedBytes = 0;
        if (this.dropped > 0) {
          this.logger.warn({ dropped: this.dropped }, 'audit log writer fell behind; events were dropped');
          this.dropped = 0;
        }
        try {
          await this.ensureCurrent();
          await this.writeAll(renderBatch(batch));
        } catch (err) {
          this.logger.error({ err: (err as Error).message, path: this.path }, 'failed to write audit events');
        }
      }
    } finally {
      this.writing = undefined;
    }
  }

  /** write(2) may take less than asked (a full disk, a signal): the rest follows, so no line is cut. */
  private async writeAll(text: string): Promise<void> {
    const { bytesWritten } = await writeFd(this.fd!, text);
    if (bytesWritten === Buffer.byteLength(text)) return;
    let rest = Buffer.from(text).subarray(bytesWritten);
    while (rest.length > 0) {
      const { bytesWritten: n } = await writeFd(this.fd!, rest);
      if (n === 0) throw new Error('the audit log accepted no bytes');
      rest = rest.subarray(n);
    }
  }

  /** Reopens the path when the open file may no longer be the one at the path (renamed, removed, replaced). */
  private async ensureCurrent(): Promise<void> {
    if (this.fd === undefined || this.stale) {
      this.stale = false;
      await this.reopen();
      this.watchFile();
    }
  }

  private async reopen(): Promise<void> {
    const old = this.fd;
    // Rare (once per rotation), so a synchronous open is fine and keeps a plain descriptor.
    this.fd = openSync(this.path, OPEN_FLAGS, 0o600);
    this.ino = fstatSync(this.fd).ino;
    if (old !== undefined) await closeFd(old).catch(() => {});
  }
}

/** ToolHive's default: audit lines on stdout (for a detached workload that is the proxy's log file). */
export class StdoutAuditSink implements AuditSink {
  private queue: AuditEntry[] = [];
  private timer: NodeJS.Timeout | undefined;

  write(entry: AuditEntry): void {
    this.queue.push(entry);
    this.timer ??= setTimeout(() => this.writeOut(), BATCH_DELAY_MS);
  }

  private writeOut(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length === 0) return;
    const text = renderBatch(this.queue);
    this.queue = [];
    process.stdout.write(text);
  }

  flush(): Promise<void> {
    this.writeOut();
    return new Promise((resolve) => {
      if (process.stdout.writableLength === 0) resolve();
      else process.stdout.once('drain', () => resolve());
    });
  }

  close(): Promise<void> {
    return this.flush();
  }
}

/** The lines of a batch, each with its newline. */
function renderBatch(batch: readonly AuditEntry[]): string {
  let text = '';
  for (const entry of batch) text += auditEntryText(entry) + '\n';
  return text;
}

export function openAuditSink(logFile: string | undefined, logger: Logger): AuditSink {
  if (logFile === undefined) return new StdoutAuditSink();
  const sink = new FileAuditSink(logFile, logger);
  try {
    sink.open();
  } catch (err) {
    throw new ThvError(ErrorCodes.InvalidConfig, `cannot open the audit log file ${logFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return sink;
}
