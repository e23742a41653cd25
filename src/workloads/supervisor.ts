/**
 * The proxy process of a workload (`thv start <name> --foreground`, which detached launches re-execute,
 * as ToolHive does): loads the saved RunConfig, resolves `--secret` references into the server's
 * environment (in memory only), starts the proxy, marks the workload `running` once it answers
 * `initialize`, then watches its health and applies the restart policy until told to stop.
 *
 * Health check: every interval the proxy's own `/health`. When it reports unhealthy, an `initialize`
 * probe decides: stdio bridges replace a dead server process on demand, so a probe that succeeds means
 * the workload healed itself (noted in the status context); a failing probe means the server is gone and
 * the whole proxy is restarted on the same port, within the restart budget.
 */
import type { RunConfig } from '../config/run-config.js';
import { ErrorCodes, isThvError } from '../errors.js';
import type { Logger } from '../logging.js';
import { requireRunConfig } from './runconfig-store.js';
import { PROXY_PID_ENV } from './runtime.js';
import { RestartBudget, restartPolicyFromEnv, type RestartPolicy } from './restart-policy.js';
import { updateStatusIf, type StatusFile, type StatusUpdate } from './status.js';
import { clientUrl, healthOnce, probeOnce } from './url.js';

interface Running {
  stop(): Promise<void>;
}

/** Errors that no restart can fix: bad configuration, a taken port, a missing secret. */
function isPermanent(err: unknown): boolean {
  return (
    isThvError(err, ErrorCodes.InvalidArgument) ||
    isThvError(err, ErrorCodes.InvalidConfig) ||
    isThvError(err, ErrorCodes.AddressInUse) ||
    isThvError(err, ErrorCodes.NotFound) ||
    (err as NodeJS.ErrnoException)?.code === 'EADDRINUSE'
  );
}

/** Status writes from the proxy never override a stop or removal in progress, nor resurrect a removed workload. */
const ours = (c: StatusFile | undefined): boolean => c !== undefined && c.status !== 'stopping' && c.status !== 'removing';

export interface SuperviseOptions {
  env?: NodeJS.ProcessEnv;
  policy?: RestartPolicy;
  /** Resolves when the workload should stop (default: SIGINT, SIGTERM or SIGQUIT). */
  stopSignal?: Promise<unknown>;
  /** Called once the proxy first answers (foreground commands print the URL here). */
  onReady?: (url: string) => void;
}

/** Runs the workload's proxy until stopped; returns the process exit status. */
export async function superviseWorkload(name: string, options: SuperviseOptions = {}): Promise<number> {
  const env = options.env ?? process.env;
  const policy = options.policy ?? restartPolicyFromEnv(env);
  const { createLogger, setRootLogger } = await import('../logging.js');
  const saved = await requireRunConfig(name, env);
  const logger = createLogger({ debug: saved.debug === true });
  setRootLogger(logger);
  const setStatus = (update: StatusUpdate) => updateStatusIf(name, ours, { pid: process.pid, ...update }, env);

  let stopRequested = false;
  let wake: () => void = () => {};
  const stopPromise =
    options.stopSignal ??
    new Promise<NodeJS.Signals>((resolve) => {
      for (const s of ['SIGINT', 'SIGTERM', 'SIGQUIT'] as const) process.once(s, () => resolve(s));
    });
  void stopPromise.then((why) => {
    logger.info({ signal: why }, 'stopping the workload');
    stopRequested = true;
    wake();
  });
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });

  let config: RunConfig;
  let startProxy: typeof import('../proxy/start.js').startProxy;
  let settingsFor: (c: RunConfig) => import('../proxy/start.js').ProxySettings;
  try {
    const [{ resolveSecretEnv }, buildMod, settingsMod, startMod] = await Promise.all([
      import('../secrets/index.js'),
      import('../config/build-run-config.js'),
      import('../proxy/settings.js'),
      import('../proxy/start.js'),
    ]);
    // Secret values join the server environment in memory only; the file keeps the references.
    const secretEnv = await resolveSecretEnv(saved.secrets ?? [], { env });
    // THV_PROXY_PID marks the server processes as ours, so a server that outlives a killed proxy can be found.
    config = { ...saved, env_vars: { ...(saved.env_vars ?? {}), ...secretEnv, [PROXY_PID_ENV]: String(process.pid) } };
    const inMemory = buildMod.inMemorySecretsFromEnv(env);
    startProxy = startMod.startProxy;
    settingsFor = (c) => settingsMod.proxySettingsFromRunConfig(c, logger, env, inMemory);
  } catch (err) {
    logger.error({ err: (err as Error).message }, 'cannot start the workload');
    await setStatus({ status: 'error', context: (err as Error).message, pid: 0 });
    return 1;
  }

  const budget = new RestartBudget(policy);
  let announced = false;
  let exitCode = 0;
  await setStatus({ status: 'starting', context: 'Starting proxy' });

  while (!stopRequested) {
    const startedAt = Date.now();
    let failure: string | undefined;
    let proxy: Running | undefined;
    try {
      proxy = await startProxy(settingsFor(config));
    } catch (err) {
      if (isPermanent(err)) {
        logger.error({ err: (err as Error).message }, 'the proxy cannot start');
        await setStatus({ status: 'error', context: (err as Error).message, pid: 0 });
        exitCode = 1;
        break;
      }
      failure = (err as Error).message;
    }
    if (proxy !== undefined) {
      failure = await waitReady(config, policy, () => stopRequested, sleep);
      if (failure === undefined && !stopRequested) {
        await setStatus({ status: 'running', context: '' });
        logger.info({ name, url: clientUrl(config) }, 'MCP server proxy is running');
        if (!announced) {
          announced = true;
          options.onReady?.(clientUrl(config));
        }
        const noteReplaced = (context: string) =>
          updateStatusIf(name, (c) => c?.status === 'running', { status: 'running', context, pid: process.pid }, env);
        failure = await watch(name, config, policy, logger, () => stopRequested, sleep, noteReplaced);
      }
      await proxy.stop().catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'error while stopping the proxy'));
    }
    if (stopRequested) break;
    const wait = budget.next(Date.now() - startedAt);
    if (wait === undefined) {
      const context = `Failed to restart after server exit: ${failure ?? 'unknown reason'}`;
      logger.error({ attempts: policy.maxAttempts }, context);
      await setStatus({ status: 'error', context, pid: 0 });
      exitCode = 1;
      break;
    }
    const context = `Server exited, restarting (attempt ${budget.attempts} of ${policy.maxAttempts}): ${failure ?? 'unknown reason'}`;
    logger.warn({ waitMs: wait }, context);
    await setStatus({ status: 'starting', context });
    await sleep(wait);
  }

  if (stopRequested) {
    // A stop or rm in progress writes the final status itself; otherwise (a signal from elsewhere) record it.
    await updateStatusIf(
      name,
      (c) => ours(c) && c!.process_id === process.pid,
      { status: 'stopped', context: '', pid: 0 },
      env,
    );
    await updateStatusIf(name, (c) => c !== undefined && c.process_id === process.pid, (c) => ({ status: c!.status, ...(c!.status_context ? { context: c!.status_context } : {}), pid: 0 }), env);
  }
  return exitCode;
}

/** Probes until the proxy answers `initialize`; returns why it did not, or undefined when ready. */
async function waitReady(
  config: RunConfig,
  policy: RestartPolicy,
  stopped: () => boolean,
  sleep: (ms: number) => Promise<void>,
): Promise<string | undefined> {
  const deadline = Date.now() + policy.readyTimeoutMs;
  let delay = 100;
  let last = 'no answer yet';
  while (!stopped()) {
    const result = await probeOnce(config);
    if (result.ok) return undefined;
    last = result.reason;
    if (result.fatal || Date.now() + delay > deadline) return last;
    await sleep(delay);
    delay = Math.min(delay * 2, 2000);
  }
  return last;
}

/** Health loop; returns the reason the server is gone, or undefined when a stop was requested. */
async function watch(
  name: string,
  config: RunConfig,
  policy: RestartPolicy,
  logger: Logger,
  stopped: () => boolean,
  sleep: (ms: number) => Promise<void>,
  noteReplaced: (context: string) => Promise<unknown>,
): Promise<string | undefined> {
  let replaced = 0;
  while (!stopped()) {
    await sleep(policy.healthIntervalMs);
    if (stopped()) return undefined;
    const healthy = await healthOnce(config);
    if (healthy === true) continue;
    if (stopped()) return undefined;
    // Unhealthy (or not answering): does the workload still serve a fresh client?
    const probe = await probeOnce(config);
    if (stopped()) return undefined;
    if (!probe.ok) return healthy === undefined ? 'the proxy stopped answering' : probe.reason;
    replaced += 1;
    const context = `server process exited and was replaced (${replaced} time${replaced === 1 ? '' : 's'})`;
    logger.warn({ name }, context);
    await noteReplaced(context);
  }
  return undefined;
}
