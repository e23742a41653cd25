import { Command } from 'commander';
import { ErrorCodes, ThvError } from '../errors.js';
import { VERSION } from '../version.js';
import { reportError } from './output.js';

/** thv-registry-api: the registry service. Not built yet; says so clearly. */
export async function main(argv: string[]): Promise<number> {
  const program = new Command('thv-registry-api')
    .description('Serve a registry of MCP servers over HTTP (MCP Registry API v0.1)')
    .version(VERSION)
    .exitOverride();
  program
    .command('serve')
    .description('Start the registry API server')
    .requiredOption('--config <file>', 'registry server configuration file')
    .action(() => {
      throw new ThvError(ErrorCodes.NotImplemented, 'thv-registry-api is not available yet in this version of thv');
    });
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    return reportError(err);
  }
}
