import { Command } from 'commander';
import { VERSION } from '../version.js';
import { reportError } from './output.js';
import { splitServerArgs } from '../config/run-flags.js';
import { registerWorkloadCommands, WORKLOAD_COMMANDS } from './workload-commands.js';
import { registerWorkloadRuntimeLoader } from '../workloads/runtime.js';

/**
 * thv: run MCP servers behind a secure proxy. Exit statuses: 0 success, 1 failure at run time,
 * 2 bad usage or configuration, 3 not available in this version.
 */
export async function main(argv: string[]): Promise<number> {
  // Everything after the first literal `--` belongs to the MCP server, as in ToolHive.
  const { before, after } = splitServerArgs(argv.slice(2));
  const program = new Command('thv')
    .description('Run MCP (Model Context Protocol) servers as workloads behind a secure HTTP proxy')
    .version(VERSION, '--version', 'print the version')
    .option('--debug', 'debug-level logs (also TOOLHIVE_DEBUG=1)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  let exitCode = 0;
  const setExitCode = (code: number): void => {
    exitCode = code;
  };
  // Startup cost matters (`thv list` runs in loops and must answer in well under 300 ms): the lifecycle
  // commands load only light modules, so when one of them is run the other commands (whose modules pull
  // in zod, pino, the proxy…) are not even loaded. Register new commands inside this block, lazily.
  const command = before.find((a) => !a.startsWith('-'));
  if (command === undefined || !WORKLOAD_COMMANDS.has(command)) {
    const [run, secret, registry, search, config, authz] = await Promise.all([
      import('./run.js'),
      import('./secret.js'),
      import('./registry.js'),
      import('./search.js'),
      import('./config.js'),
      import('./authz.js'),
    ]);
    run.registerRunCommand(program, after, setExitCode);
    secret.registerSecretCommand(program, setExitCode);
    registry.registerRegistryCommand(program, setExitCode);
    search.registerSearchCommand(program, setExitCode);
    config.registerConfigCommand(program, setExitCode);
    authz.registerAuthzCommand(program, setExitCode);
  }
  registerWorkloadCommands(program, setExitCode);
  // Container workloads: list/stop/rm find them by label in the engine. Loaded only when a workload uses
  // it: the engine client (dockerode and its dependencies) would otherwise double `thv list`'s startup.
  registerWorkloadRuntimeLoader('docker', async () => (await import('../runtime/docker/workload.js')).dockerWorkloadRuntime);
  program
    .command('version')
    .description('Print the version of thv')
    .action(() => {
      process.stdout.write(`thv ${VERSION}\n`);
    });
  try {
    await program.parseAsync(before, { from: 'user' });
    return exitCode;
  } catch (err) {
    return reportError(err);
  }
}
