/**
 * Per-workload status files (spec §5.1, ToolHive's `file_status.go`): `statuses/<name>.json` holding
 * `{status, status_context?, created_at, updated_at, process_id}`, written atomically (temp + rename,
 * mode 0600) and changed only under the workload's lock, so concurrent thv commands never lose or tear
 * an update. A file that does not parse is moved aside as `<name>.json.corrupted` and treated as absent.
 */
import { readFileSync } from 'node:fs';
import { readdir, rename, rm } from 'node:fs/promises';
import { withFileLock, writeFileAtomic } from '../secrets/atomic-file.js';
import { lockBase, statusPath, workloadPaths } from './paths.js';

export const WORKLOAD_STATUSES = [
  'starting',
  'running',
  'stopping',
  'stopped',
  'removing',
  'error',
  'unhealthy',
  'unknown',
  'unauthenticated',
  'auth_retrying',
  'policy_stopped',
] as const;
export type WorkloadStatus = (typeof WORKLOAD_STATUSES)[number];

export interface StatusFile {
  status: WorkloadStatus;
  status_context?: string;
  created_at: string;
  updated_at: string;
  /** PID of the proxy process; 0 = none. */
  process_id: number;
}

export interface StatusUpdate {
  status: WorkloadStatus;
  context?: string;
  /** New proxy PID; undefined keeps the recorded one. */
  pid?: number;
}

function isStatusFile(v: unknown): v is StatusFile {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o['status'] === 'string' && (WORKLOAD_STATUSES as readonly string[]).includes(o['status']);
}

/** The status of a workload, or undefined when it has none (a corrupt file is moved aside). */
export async function readStatus(name: string, env?: NodeJS.ProcessEnv): Promise<StatusFile | undefined> {
  const path = statusPath(name, env);
  let text: string;
  try {
    // Synchronous on purpose: `thv list` reads dozens of these, and fs.promises.readFile costs four
    // round trips through the thread pool per file (open, stat, read, close).
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!isStatusFile(parsed)) {
    await rename(path, `${path}.corrupted`).catch(() => undefined);
    return undefined;
  }
  return {
    status: parsed.status,
    ...(parsed.status_context ? { status_context: parsed.status_context } : {}),
    created_at: parsed.created_at ?? parsed.updated_at ?? new Date(0).toISOString(),
    updated_at: parsed.updated_at ?? parsed.created_at ?? new Date(0).toISOString(),
    process_id: Number.isInteger(parsed.process_id) ? parsed.process_id : 0,
  };
}

async function write(name: string, file: StatusFile, env?: NodeJS.ProcessEnv): Promise<void> {
  await writeFileAtomic(statusPath(name, env), JSON.stringify(file, null, 2) + '\n', 0o600, 0o750);
}

/** Runs `fn` holding the workload's lock (`statuses/<name>.lock`). */
export function withWorkloadLock<T>(name: string, fn: () => Promise<T>, env?: NodeJS.ProcessEnv): Promise<T> {
  return withFileLock(lockBase(name, env), fn, 10_000);
}

/** Writes a status under the lock; callers already holding it use `setStatusLocked`. */
export function setStatus(name: string, update: StatusUpdate, env?: NodeJS.ProcessEnv): Promise<StatusFile> {
  return withWorkloadLock(name, () => setStatusLocked(name, update, env), env);
}

export async function setStatusLocked(name: string, update: StatusUpdate, env?: NodeJS.ProcessEnv): Promise<StatusFile> {
  const now = new Date().toISOString();
  const previous = await readStatus(name, env);
  const next: StatusFile = {
    status: update.status,
    ...(update.context ? { status_context: update.context } : {}),
    created_at: previous?.created_at ?? now,
    updated_at: now,
    process_id: update.pid ?? previous?.process_id ?? 0,
  };
  await write(name, next, env);
  return next;
}

/**
 * Changes the status only when `predicate` accepts the current one (read-side reconciliation and the
 * proxy's own updates use it so they never overwrite a newer decision, e.g. a `stopping` set by thv stop).
 */
export function updateStatusIf(
  name: string,
  predicate: (current: StatusFile | undefined) => boolean,
  update: StatusUpdate | ((current: StatusFile | undefined) => StatusUpdate),
  env?: NodeJS.ProcessEnv,
): Promise<StatusFile | undefined> {
  return withWorkloadLock(
    name,
    async () => {
      const current = await readStatus(name, env);
      if (!predicate(current)) return undefined;
      return setStatusLocked(name, typeof update === 'function' ? update(current) : update, env);
    },
    env,
  );
}

export async function deleteStatus(name: string, env?: NodeJS.ProcessEnv): Promise<void> {
  const path = statusPath(name, env);
  await rm(path, { force: true });
  await rm(`${path}.corrupted`, { force: true });
}

/** Names of all workloads with a status file. */
export async function listStatusNames(env?: NodeJS.ProcessEnv): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(workloadPaths(env).statuses);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return entries.filter((e) => e.endsWith('.json') && !e.startsWith('.')).map((e) => e.slice(0, -'.json'.length));
}
