import type { Command } from 'commander';
import { createLogger, setRootLogger } from '../logging.js';
import { ErrorCodes, ThvError } from '../errors.js';
import { addRunFlags } from '../config/run-flags.js';
import { parseRunOptions } from '../config/run-options.js';
import { buildRunConfig } from '../config/build-run-config.js';
import { selectRuntime } from '../runtime/select.js';
import { proxySettingsFromRunConfig } from '../proxy/settings.js';
import { startProxy } from '../proxy/start.js';
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
    throw new ThvError(ErrorCodes.NotImplemented, '--from-config is not available yet in this version of thv');
  }
  if (server === undefined) {
    throw new ThvError(ErrorCodes.InvalidArgument, 'thv run needs a server to run (a package, a path, an image or a registry name)', {
      hint: 'e.g. thv run --runtime process --foreground npx://@modelcontextprotocol/server-everything',
    });
  }
  const runtime = await selectRuntime(options.runtime);
  const built = buildRunConfig({ ...options, runtime }, server, serverArgs);
  for (const w of built.warnings) logger.warn(w);
  const config = built.config;
  if (!options.foreground) {
    throw new ThvError(ErrorCodes.NotImplemented, 'detached workloads are not available yet in this version of thv', {
      hint: 'add --foreground to run the proxy in this terminal',
    });
  }
  if (config.transport === 'stdio' && options.stdioSessions === 'per-session') {
    logger.debug('stdio sessions: one server process per client session');
  }
  const settings = proxySettingsFromRunConfig(config, logger);
  const proxy = await startProxy(settings);
  logger.info({ name: config.name, url: proxy.url, transport: config.transport, runtime }, 'MCP server proxy is running');
  process.stdout.write(`MCP server ${config.name} is available at ${proxy.url}\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    for (const s of ['SIGINT', 'SIGTERM', 'SIGQUIT'] as const) process.once(s, () => resolve(s));
  });
  logger.info({ signal }, 'shutting down');
  // A second signal while stopping ends at once.
  const force = (): void => process.exit(130);
  process.once('SIGINT', force);
  process.once('SIGTERM', force);
  await proxy.stop();
  return 0;
}
