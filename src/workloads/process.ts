/**
 * The detached proxy process, seen from other thv commands: is it alive, is that PID really ours (PIDs are
 * reused), and stopping it — SIGTERM, a bounded wait, then SIGKILL to its whole process group (the proxy
 * is a session leader, so its server processes go with it).
 */
import { readFileSync } from 'node:fs';

export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A zombie answers kill(0) but is gone for our purposes.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true;
  }
}

/**
 * True when `pid` is alive and, where /proc can tell, is a thv process serving workload `name`
 * (`thv start <name> --foreground`, or `thv run --from-config …`), not some process that inherited a
 * recycled PID.
 */
export function isOurProxy(pid: number, name: string): boolean {
  if (!isAlive(pid)) return false;
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return true; // no /proc (macOS): trust the recorded PID, as ToolHive does
  }
  const args = cmdline.split('\0');
  if (args.includes('--from-config')) return true;
  const i = args.indexOf('start');
  return i !== -1 && args.slice(i + 1).includes(name);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
  return !isAlive(pid);
}

/** SIGTERM, wait up to `graceMs`, then SIGKILL the process group. Resolves once the process is gone. */
export async function terminate(pid: number, graceMs = 10_000): Promise<void> {
  if (!isAlive(pid)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  if (await waitForExit(pid, graceMs)) return;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // already gone, or not a group leader
    }
  }
  await waitForExit(pid, 5_000);
}
