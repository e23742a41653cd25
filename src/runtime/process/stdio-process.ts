import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../../logging.js';
import { ServerOutput } from '../server-output.js';

export interface ProcessSpec {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Last lines the server wrote to stderr, for the error shown to clients and in logs. */
  stderrTail: string[];
  /** Set when the process could not be started at all (ENOENT, EACCES, ...). */
  spawnError?: string;
}

const MAX_LINE_CHARS = 16 * 1024 * 1024;

/**
 * An MCP server as a child process. A stdio server speaks newline-delimited JSON-RPC on stdin/stdout,
 * whose lines are handed to `onLine`; an HTTP server (no `onLine`) just has its output logged. stderr
 * is logged and its tail kept for error reports.
 */
export class StdioProcess {
  readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  exited: ExitInfo | undefined;
  private readonly output: ServerOutput;
  private partial = '';
  private corked = false;
  private readonly exitWaiters: Array<(info: ExitInfo) => void> = [];
  /** Settles once the OS started the process (or refused to). */
  readonly spawned: Promise<void>;

  constructor(
    spec: ProcessSpec,
    private readonly logger: Logger,
    private readonly onLine: ((line: string) => void) | undefined,
    onExit: (info: ExitInfo) => void,
  ) {
    this.output = new ServerOutput(logger, () => ({ pid: this.child.pid }));
    this.child = spawn(spec.command, spec.args, {
      env: spec.env,
      cwd: spec.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      // Own process group, so that stopping the server also stops what it started (npx → node).
      detached: true,
    });
    this.spawned = new Promise<void>((resolve, reject) => {
      this.child.once('spawn', () => resolve());
      this.child.once('error', (err) => reject(new Error(describeSpawnError(spec.command, err))));
    });
    this.spawned.catch(() => {});
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    let stderrPartial = '';
    const onLogChunk = (chunk: string): void => {
      const lines = (stderrPartial + chunk).split('\n');
      stderrPartial = lines.pop() ?? '';
      for (const line of lines) this.output.stderrLine(line);
    };
    // Without a line handler the server speaks HTTP, and stdout is just more log output.
    if (onLine) this.child.stdout.on('data', (chunk: string) => this.onStdout(chunk));
    else this.child.stdout.on('data', onLogChunk);
    this.child.stderr.on('data', onLogChunk);
    this.child.stdin.on('error', () => {
      // EPIPE after the server died: the exit handler reports it.
    });
    let spawnError: string | undefined;
    this.child.on('error', (err) => {
      spawnError = describeSpawnError(spec.command, err);
    });
    this.child.on('close', (code, signal) => {
      if (stderrPartial) this.output.stderrLine(stderrPartial);
      const info: ExitInfo = { code, signal, stderrTail: this.output.stderrTail(), ...(spawnError ? { spawnError } : {}) };
      this.exited = info;
      onExit(info);
      for (const w of this.exitWaiters.splice(0)) w(info);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Writes one message. `line` must not contain raw newlines (callers strip them). */
  send(line: string): void {
    const stdin = this.child.stdin;
    if (this.exited || stdin.destroyed) return;
    // Messages written in one event-loop turn leave in one write: under load, requests from many
    // connections are read in the same poll phase, and each pipe write wakes the server (a syscall and a
    // context switch). setImmediate runs right after that phase, so a lone request waits no longer.
    if (!this.corked) {
      this.corked = true;
      stdin.cork();
      setImmediate(() => {
        this.corked = false;
        stdin.uncork();
      });
    }
    stdin.write(line + '\n');
  }

  /** Closes stdin, then escalates to SIGTERM and SIGKILL on the whole process group. */
  async stop(graceMs = 2000): Promise<ExitInfo> {
    if (this.exited) return this.exited;
    const done = new Promise<ExitInfo>((resolve) => this.exitWaiters.push(resolve));
    this.child.stdin.end();
    const term = setTimeout(() => this.signal('SIGTERM'), graceMs);
    const kill = setTimeout(() => this.signal('SIGKILL'), graceMs * 2);
    const info = await done;
    clearTimeout(term);
    clearTimeout(kill);
    return info;
  }

  signal(sig: NodeJS.Signals): void {
    if (this.exited || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, sig);
    } catch {
      try {
        this.child.kill(sig);
      } catch {
        // already gone
      }
    }
  }

  private onStdout(chunk: string): void {
    let start = 0;
    let nl = chunk.indexOf('\n');
    if (nl < 0) {
      this.partial += chunk;
      if (this.partial.length > MAX_LINE_CHARS) {
        this.logger.warn({ bytes: this.partial.length }, 'MCP server wrote an over-long line to stdout; dropped');
        this.partial = '';
      }
      return;
    }
    while (nl >= 0) {
      let line = chunk.slice(start, nl);
      if (this.partial) {
        line = this.partial + line;
        this.partial = '';
      }
      this.emitLine(line);
      start = nl + 1;
      nl = chunk.indexOf('\n', start);
    }
    if (start < chunk.length) this.partial = chunk.slice(start);
  }

  private emitLine(raw: string): void {
    const message = this.output.messageIn(raw);
    if (message !== undefined) this.onLine!(message);
  }

  noteGarbage(line: string): void {
    this.output.noteGarbage(line);
  }
}

function describeSpawnError(command: string, err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT') return `command not found: ${command}`;
  if (err.code === 'EACCES') return `permission denied: ${command} is not executable`;
  return `could not start ${command}: ${err.message}`;
}

export function describeExit(info: ExitInfo): string {
  if (info.spawnError) return info.spawnError;
  const how = info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code ?? 'unknown'}`;
  const tail = info.stderrTail.slice(-3).join(' | ');
  return tail ? `MCP server ${how}: ${tail}` : `MCP server ${how}`;
}
