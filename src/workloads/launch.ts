/**
 * Detached launch (spec §1.8): the proxy runs as `thv start <name> --foreground` in a new session, with
 * stdin closed and stdout/stderr appended to `logs/<name>.log`, and `TOOLHIVE_DETACHED=1` in its
 * environment. Literal secrets from the command line travel only in that environment (never on disk).
 * The launching command then waits for the workload's status to say `running` (the proxy writes it once
 * its server answered `initialize`) or `error`.
 */
import { spawn } from 'node:child_process';
import { mkdir, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ErrorCodes, ThvError } from '../errors.js';
import { isAlive } from './process.js';
import { logPath } from './paths.js';
import { readStatus, updateStatusIf, type StatusFile } from './status.js';

export interface LaunchOptions {
  env?: NodeJS.ProcessEnv;
  /** Extra environment for the proxy process only (in-memory secrets). */
  childEnv?: Record<string, string>;
  debug?: boolean;
}

/** The command line that re-executes this thv (same node flags, same entry script). */
export function selfCommand(args: string[]): { command: string; args: string[] } {
  const entry = process.argv[1];
  if (entry === undefined) throw new ThvError(ErrorCodes.Internal, 'cannot tell which script is running thv');
  return { command: process.execPath, args: [...process.execArgv, entry, ...args] };
}

/** Spawns the detached proxy for `name` and records its PID; returns the PID. */
export async function spawnDetachedProxy(name: string, options: LaunchOptions = {}): Promise<number> {
  const env = options.env ?? process.env;
  const log = logPath(name, env);
  await mkdir(dirname(log), { recursive: true, mode: 0o750 });
  const handle = await open(log, 'a', 0o600);
  const { command, args } = selfCommand(['start', name, '--foreground', ...(options.debug ? ['--debug'] : [])]);
  let pid: number | undefined;
  try {
    const child = spawn(command, args, {
      detached: true,
      stdio: ['ignore', handle.fd, handle.fd],
      env: { ...env, ...options.childEnv, TOOLHIVE_DETACHED: '1' },
    });
    pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid!));
      child.once('error', reject);
    });
    child.unref();
  } catch (err) {
    await updateStatusIf(name, () => true, { status: 'error', context: `failed to start the proxy: ${(err as Error).message}`, pid: 0 }, env);
    throw new ThvError(ErrorCodes.ServerStartFailed, `failed to start the proxy for '${name}': ${(err as Error).message}`);
  } finally {
    await handle.close();
  }
  // The proxy records its own PID as soon as it runs; this covers the moments before.
  await updateStatusIf(
    name,
    (c) => c !== undefined && c.process_id === 0 && c.status === 'starting',
    (c) => ({ status: c!.status, ...(c!.status_context ? { context: c!.status_context } : {}), pid }),
    env,
  );
  return pid;
}

async function logTail(name: string, env: NodeJS.ProcessEnv, lines = 5): Promise<string> {
  try {
    const text = await readFile(logPath(name, env), 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * Waits until the workload is `running`; throws ServerStartFailed when it ends in `error`, when the proxy
 * process is gone, or when `timeoutMs` passes (the proxy keeps trying in the background then).
 */
export async function waitForRunning(name: string, pid: number, timeoutMs: number, env: NodeJS.ProcessEnv = process.env): Promise<StatusFile> {
  const deadline = Date.now() + timeoutMs;
  let delay = 20;
  for (;;) {
    const status = await readStatus(name, env);
    if (status?.status === 'running') return status;
    if (status?.status === 'error') {
      throw new ThvError(ErrorCodes.ServerStartFailed, `workload '${name}' failed to start: ${status.status_context ?? 'unknown error'}`, {
        hint: `see: thv logs ${name} --proxy`,
      });
    }
    if (status === undefined) throw new ThvError(ErrorCodes.ServerStartFailed, `workload '${name}' was removed while starting`);
    if (!isAlive(pid)) {
      // It may have written its final status just before exiting.
      const last = await readStatus(name, env);
      if (last?.status === 'running') return last;
      const tail = await logTail(name, env);
      throw new ThvError(ErrorCodes.ServerStartFailed, `the proxy for '${name}' exited while starting${last?.status_context ? `: ${last.status_context}` : ''}${tail ? `\n${tail}` : ''}`, {
        hint: `see: thv logs ${name} --proxy`,
      });
    }
    if (Date.now() > deadline) {
      throw new ThvError(ErrorCodes.ServerStartFailed, `workload '${name}' did not become ready within ${Math.round(timeoutMs / 1000)} s (${status.status}${status.status_context ? `: ${status.status_context}` : ''}); it keeps trying in the background`, {
        hint: `check: thv status ${name}, thv logs ${name} --proxy`,
      });
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 100);
  }
}
