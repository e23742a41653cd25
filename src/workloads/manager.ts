/**
 * Lifecycle operations (spec §5.3–§5.5) on top of the state files, the detached proxy and the runtime seam.
 * Every read-modify-write of a status happens under the workload's lock; the slow parts (stopping a
 * process, waiting for readiness) happen outside it, bracketed by `stopping`/`starting` so that other
 * commands see what is going on.
 */
import { rm } from 'node:fs/promises';
import type { RunConfig } from '../config/run-config.js';
import { ErrorCodes, ThvError } from '../errors.js';
import { requireGroup } from './groups.js';
import { spawnDetachedProxy, waitForRunning } from './launch.js';
import { logPath } from './paths.js';
import { isOurProxy, terminate } from './process.js';
import { deleteRunConfig, loadRunConfig, requireRunConfig, saveRunConfig, workloadKey } from './runconfig-store.js';
import { runtimeFor } from './runtime.js';
import { deleteStatus, readStatus, setStatus, setStatusLocked, updateStatusIf, withWorkloadLock } from './status.js';
import { clientUrl } from './url.js';

export const DEFAULT_WAIT_TIMEOUT_MS = 120_000;

export function waitTimeoutFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.THV_WAIT_TIMEOUT_MS);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_WAIT_TIMEOUT_MS;
}

function validateName(name: string): void {
  if (!/^[a-zA-Z0-9._-]+$/.test(name) || name.length > 100 || name === '.' || name === '..') {
    throw new ThvError(ErrorCodes.InvalidArgument, `invalid workload name ${JSON.stringify(name)}`);
  }
}

export interface StartedWorkload {
  name: string;
  url: string;
  pid: number;
  /** `thv start` on a workload that was already running did nothing. */
  alreadyRunning?: boolean;
}

export interface DetachedRunOptions {
  env?: NodeJS.ProcessEnv;
  /** Literal secrets for the proxy's environment (never written to disk). */
  childEnv?: Record<string, string>;
  /** `--from-config`: replace any state of the same name instead of refusing. */
  replace?: boolean;
  waitTimeoutMs?: number;
}

/**
 * Claims the name and saves the RunConfig: refuses (AlreadyExists) when a workload of that name exists and
 * is not in `error` — ToolHive's `DoesWorkloadExist` — unless `replace` (then a live proxy is stopped first).
 */
export async function registerWorkload(config: RunConfig, options: { env?: NodeJS.ProcessEnv; replace?: boolean } = {}): Promise<void> {
  const env = options.env ?? process.env;
  const name = workloadKey(config);
  validateName(name);
  await requireGroup(config.group || 'default', env);
  if (options.replace) {
    const current = await readStatus(name, env);
    if (current !== undefined && isOurProxy(current.process_id, name)) await terminate(current.process_id);
  }
  await withWorkloadLock(
    name,
    async () => {
      const current = await readStatus(name, env);
      const configExists = (await loadRunConfig(name, env).catch(() => undefined)) !== undefined;
      if (!options.replace && ((current !== undefined && current.status !== 'error') || (current === undefined && configExists))) {
        throw new ThvError(ErrorCodes.AlreadyExists, `workload with name '${name}' already exists`, {
          hint: `pick another --name, or remove it first: thv rm ${name}`,
        });
      }
      await saveRunConfig(config, env);
      await setStatusLocked(name, { status: 'starting', context: 'Starting proxy', pid: 0 }, env);
    },
    env,
  );
}

/**
 * Checks now that every `--secret` resolves (while a person can still see the error) and returns what the
 * detached proxy needs to resolve them again itself: the encrypted store's password, which may have been
 * typed at a prompt here, travels in the proxy's environment only (never on disk; the proxy strips
 * TOOLHIVE_* variables before starting the server).
 */
export async function detachedSecretsEnv(config: RunConfig, env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  if ((config.secrets ?? []).length === 0) return {};
  const { prepareDetachedSecrets } = await import('../secrets/index.js');
  return prepareDetachedSecrets(config.secrets ?? [], { env });
}

/** Starts the detached proxy of a registered workload and waits until it serves. */
export async function launchRegistered(config: RunConfig, options: DetachedRunOptions = {}): Promise<StartedWorkload> {
  const env = options.env ?? process.env;
  const name = workloadKey(config);
  const pid = await spawnDetachedProxy(name, { env, childEnv: options.childEnv, debug: config.debug === true });
  await waitForRunning(name, pid, options.waitTimeoutMs ?? waitTimeoutFromEnv(env), env);
  return { name, url: clientUrl(config), pid };
}

/** `thv stop <name>`: stops the proxy (and the server with it); keeps the RunConfig. */
export async function stopWorkload(name: string, env: NodeJS.ProcessEnv = process.env): Promise<'stopped' | 'not-running'> {
  validateName(name);
  const status = await readStatus(name, env);
  const config = await loadRunConfig(name, env).catch(() => undefined);
  if (status === undefined && config === undefined) {
    throw new ThvError(ErrorCodes.NotFound, `workload '${name}' not found`);
  }
  const pid = status?.process_id ?? 0;
  const alive = isOurProxy(pid, name);
  if (!alive && (status === undefined || status.status === 'stopped' || status.status === 'error')) return 'not-running';
  await setStatus(name, { status: 'stopping', context: '' }, env);
  if (alive) await terminate(pid);
  if (config !== undefined) await (await runtimeFor(config)).stopServer(config, pid);
  await setStatus(name, { status: 'stopped', context: '', pid: 0 }, env);
  return 'stopped';
}

/** `thv rm <name>`: stops everything and deletes the RunConfig, status and log file. */
export async function removeWorkload(name: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  validateName(name);
  const status = await readStatus(name, env);
  const config = await loadRunConfig(name, env).catch(() => undefined);
  if (status === undefined && config === undefined) {
    throw new ThvError(ErrorCodes.NotFound, `workload '${name}' not found`);
  }
  await setStatus(name, { status: 'removing', context: '' }, env);
  const pid = status?.process_id ?? 0;
  if (isOurProxy(pid, name)) await terminate(pid);
  if (config !== undefined) await (await runtimeFor(config)).removeServer(config, pid);
  await withWorkloadLock(
    name,
    async () => {
      await deleteRunConfig(name, env);
      await deleteStatus(name, env);
      await rm(logPath(name, env), { force: true });
    },
    env,
  );
}

/**
 * `thv start <name>` (detached): a workload that is running with a live proxy is left alone (ToolHive
 * quirk 15, kept: same URL); otherwise any leftover proxy is stopped and a new one started on the saved
 * ports.
 */
export async function startWorkload(name: string, options: DetachedRunOptions = {}): Promise<StartedWorkload> {
  const env = options.env ?? process.env;
  validateName(name);
  const config = await requireRunConfig(name, env);
  const status = await readStatus(name, env);
  const pid = status?.process_id ?? 0;
  if (status?.status === 'running' && isOurProxy(pid, name)) {
    return { name, url: clientUrl(config), pid, alreadyRunning: true };
  }
  // Before anything changes: a missing secret or a wrong password leaves the workload as it was.
  const secretsEnv = await detachedSecretsEnv(config, env);
  if (isOurProxy(pid, name)) {
    await setStatus(name, { status: 'stopping', context: '' }, env);
    await terminate(pid);
  }
  // A server that outlived a killed proxy would hold the workload's port.
  await (await runtimeFor(config)).stopServer(config, pid);
  await setStatus(name, { status: 'starting', context: 'Starting proxy', pid: 0 }, env);
  return launchRegistered(config, { ...options, childEnv: { ...options.childEnv, ...secretsEnv } });
}

/** `thv restart <name>`: stop (if running), then start on the same ports, so the URL does not change. */
export async function restartWorkload(name: string, options: DetachedRunOptions = {}): Promise<StartedWorkload> {
  const env = options.env ?? process.env;
  // Secrets are checked (and a password asked) before the stop, so a refusal leaves the workload running.
  await detachedSecretsEnv(await requireRunConfig(name, env), env);
  await stopWorkload(name, env);
  return startWorkload(name, options);
}

/** Prepares `thv start <name> --foreground` in this process: status `starting` with our PID. */
export async function prepareForeground(name: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  validateName(name);
  await requireRunConfig(name, env);
  const status = await readStatus(name, env);
  const pid = status?.process_id ?? 0;
  if (pid !== process.pid && isOurProxy(pid, name)) {
    throw new ThvError(ErrorCodes.AlreadyExists, `workload '${name}' is already served by process ${pid}`, { hint: `stop it first: thv stop ${name}` });
  }
  await updateStatusIf(
    name,
    (c) => c === undefined || (c.status !== 'removing' && c.status !== 'stopping'),
    { status: 'starting', context: 'Starting proxy', pid: process.pid },
    env,
  );
}
