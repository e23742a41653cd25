/**
 * The seam between the workload manager and a runtime. The manager owns state files and the proxy process;
 * a runtime owns the MCP server itself. A container runtime answers from the engine (the container
 * outlives the proxy, is stopped by `thv stop`, removed by `thv rm`). On the process runtime the server
 * is a child of the proxy and normally dies with it; only when the proxy was killed outright can an HTTP
 * server outlive it, and `stopServer` then finds it by the marker the proxy put in its environment.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { RunConfig, RuntimeKind } from '../config/run-config.js';
import { isAlive, waitForExit } from './process.js';

/** What the runtime sees of the server, independently of the proxy. */
export type ServerState = 'running' | 'stopped' | 'missing' | 'follows-proxy';

export interface WorkloadRuntime {
  readonly kind: RuntimeKind;
  serverState(config: RunConfig): Promise<ServerState>;
  /** After the proxy (whose PID was `proxyPid`) stopped: stop the server if it outlived the proxy. */
  stopServer(config: RunConfig, proxyPid: number): Promise<void>;
  /** `thv rm`: remove whatever the runtime created for the workload. */
  removeServer(config: RunConfig, proxyPid: number): Promise<void>;
}

/** Environment marker the proxy gives its server processes (process runtime). */
export const PROXY_PID_ENV = 'THV_PROXY_PID';

/** PIDs of live processes whose environment carries `THV_PROXY_PID=<proxyPid>` (Linux /proc; elsewhere none). */
export function serverProcessesOf(proxyPid: number): number[] {
  const marker = `${PROXY_PID_ENV}=${proxyPid}`;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const e of entries) {
    const pid = Number(e);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(marker)) found.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return found.filter(isAlive);
}

async function stopOrphans(proxyPid: number): Promise<void> {
  if (proxyPid <= 0 || isAlive(proxyPid)) return;
  const orphans = serverProcessesOf(proxyPid);
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    for (const pid of orphans) {
      for (const target of [-pid, pid]) {
        try {
          process.kill(target, signal);
        } catch {
          // gone
        }
      }
    }
    const all = await Promise.all(orphans.map((pid) => waitForExit(pid, 3000)));
    if (all.every(Boolean)) return;
  }
}

export const processRuntime: WorkloadRuntime = {
  kind: 'process',
  async serverState() {
    return 'follows-proxy';
  },
  stopServer: (_config, proxyPid) => stopOrphans(proxyPid),
  removeServer: (_config, proxyPid) => stopOrphans(proxyPid),
};

type RuntimeLoader = () => Promise<WorkloadRuntime>;
const runtimes = new Map<RuntimeKind, WorkloadRuntime | RuntimeLoader>([['process', processRuntime]]);

/** Lets a container runtime plug in (`registerWorkloadRuntime(dockerRuntime)`). */
export function registerWorkloadRuntime(runtime: WorkloadRuntime): void {
  runtimes.set(runtime.kind, runtime);
}

/**
 * Same, loaded on first use: `thv list` must not pay for an engine client (dockerode and its
 * dependencies) when no workload uses that runtime.
 */
export function registerWorkloadRuntimeLoader(kind: RuntimeKind, load: RuntimeLoader): void {
  runtimes.set(kind, load);
}

export async function runtimeFor(config: RunConfig): Promise<WorkloadRuntime> {
  const kind = config.thv_runtime ?? 'process';
  const entry = runtimes.get(kind);
  if (entry === undefined) return processRuntime;
  if (typeof entry !== 'function') return entry;
  const runtime = await entry();
  runtimes.set(kind, runtime);
  return runtime;
}
