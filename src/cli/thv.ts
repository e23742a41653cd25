import { Command } from 'commander';
import { VERSION } from '../version.js';
import { reportError } from './output.js';
import { registerRunCommand } from './run.js';
import { splitServerArgs } from '../config/run-flags.js';

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
  registerRunCommand(program, after, (code) => {
    exitCode = code;
  });
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
