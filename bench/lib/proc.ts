/**
 * Process plumbing for the benchmarks: every contender runs in its own process group so that the
 * whole tree (proxy, shell, stdio server) can be signalled at once, and every wait is bounded.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import net from 'node:net';

/** A spawned process group; `pid` is also the group id because it is spawned `detached`. */
export interface Group {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** Settles when the group leader exits (never rejects). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>;
  /** Whether the group leader has exited. */
  hasExited(): boolean;
  /** Path of the file collecting stdout+stderr, when output was sent to a file. */
  readonly logFile: string | undefined;
}

const live = new Set<Group>();

/** Thrown for any phase that runs past its deadline. */
export class TimeoutError extends Error {
  constructor(label: string, ms: number) {
    super(`${label} timed out after ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/** Races `promise` against a deadline; the timer never keeps the process alive. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(label, ms)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Spawns `command args` as the leader of a new process group. With `logFile`, stdout and stderr go
 * straight to that file (no pipe for the harness to drain); otherwise `stdio` is used as given.
 */
export function spawnGroup(
  name: string,
  command: string,
  args: readonly string[],
  options: { logFile?: string; stdio?: SpawnOptions['stdio']; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Group {
  let fd: number | undefined;
  let stdio: SpawnOptions['stdio'] = options.stdio ?? ['pipe', 'pipe', 'pipe'];
  if (options.logFile !== undefined) {
    fd = openSync(options.logFile, 'a');
    stdio = ['ignore', fd, fd];
  }
  const child = spawn(command, args, {
    detached: true,
    stdio,
    cwd: options.cwd,
    env: options.env ?? process.env,
  });
  if (fd !== undefined) closeSync(fd);
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
    child.once('error', (error) => {
      done = true;
      resolve({ code: null, signal: null, error });
    });
  });
  if (child.pid === undefined) {
    // The spawn itself failed (ENOENT, EACCES); 'error' settles `exited` on the next tick.
    return { name, child, pid: -1, exited, hasExited: () => true, logFile: options.logFile };
  }
  const group: Group = {
    name,
    child,
    pid: child.pid,
    exited,
    hasExited: () => done,
    logFile: options.logFile,
  };
  live.add(group);
  void exited.then(() => {
    if (!groupAlive(group.pid)) live.delete(group);
  });
  return group;
}

function groupAlive(pgid: number): boolean {
  if (pgid <= 0) return false;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  if (pgid <= 0) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

async function waitGroupGone(pgid: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (groupAlive(pgid)) {
    if (Date.now() >= end) return false;
    await delay(25);
  }
  return true;
}

/**
 * Stops a group: SIGTERM to every member, wait (bounded) for the leader and then for the rest of
 * the group, SIGKILL whatever is left. Resolves once nothing in the group remains (or gives up
 * after the SIGKILL grace and says so).
 */
export async function killGroup(group: Group, termGraceMs = 4000): Promise<{ clean: boolean }> {
  if (group.pid <= 0) return { clean: true };
  signalGroup(group.pid, 'SIGTERM');
  let clean = true;
  try {
    await withTimeout(group.exited, termGraceMs, `${group.name} exit`);
  } catch {
    clean = false;
  }
  if (!(await waitGroupGone(group.pid, clean ? 1500 : 0))) {
    clean = false;
    signalGroup(group.pid, 'SIGKILL');
    await withTimeout(group.exited, 2000, `${group.name} exit after SIGKILL`).catch(() => undefined);
    await waitGroupGone(group.pid, 2000);
  }
  live.delete(group);
  return { clean };
}

/** Synchronous last resort for process exit / signals: SIGKILL every group still known. */
export function killAllGroupsSync(): void {
  for (const group of live) signalGroup(group.pid, 'SIGKILL');
  live.clear();
}

/** A port the kernel just handed out on 127.0.0.1 (released again before returning). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not allocate a port'));
      });
    });
  });
}

function tryConnect(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(500);
    const finish = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => finish(true));
    socket.once('timeout', () => finish(false));
    socket.once('error', () => finish(false));
  });
}

/**
 * Polls until `host:port` accepts a TCP connection. Fails early when `group` exits first, and
 * after `timeoutMs` otherwise.
 */
export async function waitForPort(
  port: number,
  opts: { host?: string; timeoutMs: number; group?: Group },
): Promise<void> {
  const host = opts.host ?? '127.0.0.1';
  const end = Date.now() + opts.timeoutMs;
  for (;;) {
    if (opts.group?.hasExited()) {
      const { code, signal, error } = await opts.group.exited;
      if (error !== undefined) throw new Error(`could not start: ${error.message}`);
      throw new Error(`process exited before listening (code ${code ?? '-'}, signal ${signal ?? '-'})`);
    }
    if (await tryConnect(port, host)) return;
    if (Date.now() >= end) throw new TimeoutError(`waiting for ${host}:${port} to accept connections`, opts.timeoutMs);
    await delay(50);
  }
}

/** The last `bytes` of a log file, for error reports. */
export function tailFile(path: string | undefined, bytes = 1500): string {
  if (path === undefined) return '';
  try {
    const size = statSync(path).size;
    const text = readFileSync(path).subarray(Math.max(0, size - bytes)).toString('utf8');
    return text.trim();
  } catch {
    return '';
  }
}
