/**
 * `thv logs` (spec §5.6). The proxy log is `logs/<name>.log` (the detached proxy's stdout and stderr:
 * JSON lines). On the process runtime the server is the proxy's child and what it writes to stderr is
 * logged there as `server stderr` entries; `thv logs <name>` shows those lines as the server wrote them,
 * `--proxy` shows the whole proxy log. `--follow` keeps printing what is appended until interrupted.
 */
import { open, readdir, rm, stat } from 'node:fs/promises';
import { ErrorCodes, ThvError } from '../errors.js';
import { logPath, workloadPaths } from './paths.js';
import { listRunConfigNames } from './runconfig-store.js';
import { listStatusNames } from './status.js';

/** A proxy log line as the server's own output, or undefined when it is not server output. */
export function serverLine(line: string): string | undefined {
  if (!line.includes('"server stderr"')) return undefined;
  try {
    const entry = JSON.parse(line) as { msg?: unknown; stderr?: unknown };
    return entry.msg === 'server stderr' && typeof entry.stderr === 'string' ? entry.stderr : undefined;
  } catch {
    return undefined;
  }
}

export interface LogsOptions {
  proxy: boolean;
  follow: boolean;
  out?: NodeJS.WritableStream;
  env?: NodeJS.ProcessEnv;
  /** Ends `--follow` (default: SIGINT/SIGTERM). */
  until?: Promise<unknown>;
}

export async function showLogs(name: string, options: LogsOptions): Promise<void> {
  const out = options.out ?? process.stdout;
  const path = logPath(name, options.env);
  try {
    await stat(path);
  } catch {
    throw new ThvError(ErrorCodes.NotFound, `no logs for workload '${name}' (looked for ${path})`);
  }
  const handle = await open(path, 'r');
  let position = 0;
  let partial = '';
  const emit = (text: string): void => {
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const shown = options.proxy ? line : serverLine(line);
      if (shown !== undefined) out.write(shown + '\n');
    }
  };
  const drain = async (): Promise<void> => {
    for (;;) {
      const buf = Buffer.alloc(64 * 1024);
      const { bytesRead } = await handle.read(buf, 0, buf.length, position);
      if (bytesRead === 0) return;
      position += bytesRead;
      emit(buf.subarray(0, bytesRead).toString('utf8'));
    }
  };
  try {
    await drain();
    if (!options.follow) {
      if (partial) emit('\n');
      return;
    }
    let stopped = false;
    const until =
      options.until ??
      new Promise((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
    void until.then(() => (stopped = true));
    while (!stopped) {
      await Promise.race([new Promise((r) => setTimeout(r, 200)), until]);
      await drain();
    }
  } finally {
    await handle.close();
  }
}

/** `thv logs prune`: deletes the log files of workloads that no longer exist; returns their names. */
export async function pruneLogs(env?: NodeJS.ProcessEnv): Promise<string[]> {
  const known = new Set([...(await listStatusNames(env)), ...(await listRunConfigNames(env))]);
  let entries: string[];
  try {
    entries = await readdir(workloadPaths(env).logs);
  } catch {
    return [];
  }
  const pruned: string[] = [];
  for (const e of entries) {
    if (!e.endsWith('.log')) continue;
    const name = e.slice(0, -4);
    if (known.has(name)) continue;
    await rm(logPath(name, env), { force: true });
    pruned.push(name);
  }
  return pruned;
}
