/**
 * What `thv list` and `thv status` show (spec §5.2, ToolHive's `core.Workload`), from the status files and
 * the saved run configurations, after read-side reconciliation: a workload whose file says `running` but
 * whose proxy process is gone is reported — and recorded — as `unhealthy`, never as a stale `running`.
 */
import type { RunConfig } from '../config/run-config.js';
import { isOurProxy } from './process.js';
import { listRunConfigNames, loadRunConfig } from './runconfig-store.js';
import { runtimeFor } from './runtime.js';
import { listStatusNames, readStatus, updateStatusIf, type StatusFile, type WorkloadStatus } from './status.js';
import { clientUrl } from './url.js';

export interface Workload {
  name: string;
  package: string;
  url: string;
  port: number;
  transport_type: string;
  proxy_mode: string;
  status: WorkloadStatus;
  status_context: string;
  created_at: string;
  labels: Record<string, string>;
  group: string;
  tools: string[];
  remote: boolean;
  started_at: string;
  /** Our addition: the proxy's PID (0 = none). */
  process_id: number;
}

/** Statuses `thv list` shows without `--all`. */
const LISTED_BY_DEFAULT: ReadonlySet<WorkloadStatus> = new Set(['running', 'auth_retrying']);

/** Labels the user set (standard `toolhive*` labels are ours). */
export function userLabels(config: RunConfig | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(config?.container_labels ?? {})) {
    if (k === 'toolhive' || k.startsWith('toolhive-')) continue;
    out[k] = v;
  }
  return out;
}

/** A status whose proxy is gone is corrected on disk (under the lock, only if nothing changed meanwhile). */
async function reconcile(name: string, status: StatusFile, config: RunConfig | undefined, env?: NodeJS.ProcessEnv): Promise<StatusFile> {
  if (status.status !== 'running') return status;
  if (isOurProxy(status.process_id, name)) {
    if (config === undefined) return status;
    const server = await (await runtimeFor(config)).serverState(config);
    if (server === 'running' || server === 'follows-proxy') return status;
    const context = `workload status mismatch: file indicates running, but runtime shows ${server}`;
    return (await updateStatusIf(name, (c) => c?.status === 'running', { status: 'unhealthy', context }, env)) ?? status;
  }
  const context = `proxy process not running: workload shows running but proxy process for ${name} is not active`;
  const updated = await updateStatusIf(
    name,
    (c) => c?.status === 'running' && c.process_id === status.process_id,
    // The PID stays recorded: a server that outlived its proxy is found through it (runtime.ts).
    { status: 'unhealthy', context },
    env,
  );
  return updated ?? (await readStatus(name, env)) ?? status;
}

function toWorkload(name: string, status: StatusFile | undefined, config: RunConfig | undefined): Workload {
  const remote = config?.remote_url !== undefined && config.remote_url !== '';
  const s: StatusFile = status ?? { status: 'stopped', created_at: '', updated_at: '', process_id: 0 };
  return {
    name,
    package: remote ? 'remote' : (config?.image ?? ''),
    url: config !== undefined ? clientUrl(config) : '',
    port: config?.port ?? 0,
    transport_type: config?.transport ?? '',
    proxy_mode: config?.proxy_mode ?? '',
    status: s.status,
    status_context: s.status_context ?? '',
    created_at: s.created_at,
    labels: userLabels(config),
    group: config?.group || 'default',
    tools: config?.tools_filter ?? [],
    remote,
    started_at: s.status === 'running' ? s.updated_at : '',
    process_id: s.process_id,
  };
}

export async function getWorkload(name: string, env?: NodeJS.ProcessEnv): Promise<Workload | undefined> {
  const [status, config] = await Promise.all([readStatus(name, env), loadRunConfig(name, env).catch(() => undefined)]);
  if (status === undefined && config === undefined) return undefined;
  const reconciled = status === undefined ? undefined : await reconcile(name, status, config, env);
  return toWorkload(name, reconciled, config);
}

export interface ListOptions {
  all?: boolean;
  group?: string;
  /** key=value pairs that must all match. */
  labels?: Record<string, string>;
}

export async function listWorkloads(options: ListOptions = {}, env?: NodeJS.ProcessEnv): Promise<Workload[]> {
  const [statusNames, configNames] = await Promise.all([listStatusNames(env), listRunConfigNames(env)]);
  const names = [...new Set([...statusNames, ...configNames])].sort();
  const all = (await Promise.all(names.map((n) => getWorkload(n, env)))).filter((w): w is Workload => w !== undefined);
  return all.filter((w) => {
    if (!options.all && !LISTED_BY_DEFAULT.has(w.status)) return false;
    if (options.group !== undefined && w.group !== options.group) return false;
    for (const [k, v] of Object.entries(options.labels ?? {})) if (w.labels[k] !== v) return false;
    return true;
  });
}
