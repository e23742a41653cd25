import type { Command } from 'commander';
import { createLogger, setRootLogger } from '../logging.js';
import { ErrorCodes, ThvError } from '../errors.js';
import { addRunFlags } from '../config/run-flags.js';
import { parseRunOptions, resolveHostToIPv4 } from '../config/run-options.js';
import { buildRunConfigWithRegistry } from '../registry/build-run.js';
import { resolveSecretEnv } from '../secrets/index.js';
import { selectRuntime } from '../runtime/select.js';
import { proxySettingsFromRunConfig } from '../proxy/settings.js';
import { startProxy } from '../proxy/start.js';
import { loadAppConfig } from '../secrets/app-config.js';
import { otelDefaultsFromAppConfig } from '../telemetry/otel-app-config.js';
import { reportError } from './output.js';

/** `thv run`: builds and validates the RunConfig, then serves it in the foreground. */
export function registerRunCommand(program: Command, serverArgs: string[], setExitCode: (code: number) => void): void {
  const cmd = program
    .command('run')
    .summary('run an MCP server behind the proxy')
    .description(
      'Run an MCP server behind an HTTP proxy that speaks Streamable HTTP (and legacy SSE) to clients.\n\n' +
        'SERVER is a package (npx://<pkg>, uvx://<pkg>, go://<pkg>, go://./<path>), a local executable ' +
        '(./server, /path/to/server), a container image or a registry name. Arguments after -- are passed ' +
        'to the server.\n\nExample:\n  thv run --runtime process --foreground npx://@modelcontextprotocol/server-everything',
    )
    .argument('[server]', 'what to run (package, path, image or registry name)')
    .allowExcessArguments(false);
  addRunFlags(cmd);
  cmd.action(async (server: string | undefined, _raw: unknown, command: Command) => {
    try {
      setExitCode(await run(server, serverArgs, { ...program.opts(), ...command.opts() }));
    } catch (err) {
      setExitCode(reportError(err));
    }
  });
}

async function run(server: string | undefined, serverArgs: string[], raw: Record<string, unknown>): Promise<number> {
  const { options, warnings } = parseRunOptions(raw, process.env);
  const logger = createLogger({ debug: options.debug });
  setRootLogger(logger);
  for (const w of warnings) logger.warn(w);
  if (options.fromConfig !== undefined) {
    // The saved file is the workload (src/workloads/detached-run.ts); --foreground serves it here.
    const { runFromConfigFile } = await import('../workloads/detached-run.js');
    return runFromConfigFile(options.fromConfig, { foreground: options.foreground });
  }
  if (server === undefined) {
    throw new ThvError(ErrorCodes.InvalidArgument, 'thv run needs a server to run (a package, a path, an image or a registry name)', {
      hint: 'e.g. thv run --runtime process --foreground npx://@modelcontextprotocol/server-everything',
    });
  }
  // A hostname is bound as its first IPv4 address, as ToolHive does (and the URL shows that address).
  options.host = await resolveHostToIPv4(options.host);
  // A remote (a URL, or a registry entry naming one) needs no runtime: a missing engine only matters otherwise.
  let runtimeError: unknown;
  const runtime = /^https?:\/\/[^/?#]/i.test(server)
    ? 'process'
    : await selectRuntime(options.runtime).catch((err: unknown) => {
        runtimeError = err;
        return 'process' as const;
      });
  // Registry names resolve here (src/registry/build-run.ts); everything else goes straight to buildRunConfig.
  // config.yaml `otel:` (thv config otel set-*) fills in --otel-* flags that were not given.
  const otelDefaults = otelDefaultsFromAppConfig(await loadAppConfig());
  const built = await buildRunConfigWithRegistry({ ...options, runtime }, server, serverArgs, { otelDefaults });
  if (runtimeError !== undefined && built.config.remote_url === undefined) throw runtimeError;
  for (const w of built.warnings) logger.warn(w);
  let config = built.config;
  // Containers: the image is built (npx://, uvx://, go://) or pulled now, and the RunConfig names the result.
  if (runtime === 'docker' && config.remote_url === undefined) {
    const { prepareDockerRuntime } = await import('../runtime/docker/prepare.js');
    config = (await prepareDockerRuntime(config, { caCert: options.caCert, imageVerification: options.imageVerification }, logger)).config;
  }
  if (!options.foreground) {
    // Detached: save the workload, start its proxy in the background, wait for initialize, print the URL.
    const { runDetached } = await import('../workloads/detached-run.js');
    return runDetached(config, built.inMemorySecrets);
  }
  if (config.transport === 'stdio' && options.stdioSessions === 'per-session') {
    logger.debug('stdio sessions: one server process per client session');
  }
  // --secret values are resolved at start and merged in memory only; the RunConfig keeps the references.
  const secretEnv = await resolveSecretEnv(config.secrets ?? []);
  const settings = proxySettingsFromRunConfig(
    { ...config, env_vars: { ...(config.env_vars ?? {}), ...secretEnv } },
    logger,
    process.env,
    built.inMemorySecrets,
  );
  // Signals are ours before the proxy starts: one that comes while it starts stops it once it is up
  // (the default action would kill thv and leave its server behind), and a client that reads the URL
  // and stops thv at once never finds it without a handler.
  const stopSignal = catchStopSignal();
  const proxy = await startProxy(settings);
  logger.info({ name: config.name, url: proxy.url, transport: config.transport, runtime }, 'MCP server proxy is running');
  process.stdout.write(`MCP server ${config.name} is available at ${proxy.url}\n`);
  const signal = await stopSignal;
  logger.info({ signal }, 'shutting down');
  await proxy.stop();
  return 0;
}

/**
 * Resolves on the first SIGINT, SIGTERM or SIGQUIT. From then on a second SIGINT or SIGTERM ends thv at
 * once (exit 130); that handler is added before the first ones are removed, so no signal ever finds
 * thv without one.
 */
function catchStopSignal(): Promise<NodeJS.Signals> {
  const signals = ['SIGINT', 'SIGTERM', 'SIGQUIT'] as const;
  return new Promise((resolve) => {
    const first = (signal: NodeJS.Signals): void => {
      const force = (): void => process.exit(130);
      process.once('SIGINT', force);
      process.once('SIGTERM', force);
      for (const s of signals) process.off(s, first);
      resolve(signal);
    };
    for (const s of signals) process.on(s, first);
  });
}
