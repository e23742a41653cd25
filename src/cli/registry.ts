import type { Command } from 'commander';
import { ErrorCodes, ThvError } from '../errors.js';
import { configuredProvider } from '../registry/index.js';
import { entriesTable, entryText, entryToJson } from '../registry/present.js';
import { reportError } from './output.js';

/** `--format`/`--output` (ToolHive's registry commands say --format; thv's list says --output): json or text. */
export function outputFormat(opts: { format?: string; output?: string }): 'json' | 'text' {
  const value = (opts.output ?? opts.format ?? 'text').toLowerCase();
  if (value !== 'json' && value !== 'text') {
    throw new ThvError(ErrorCodes.InvalidArgument, `invalid format "${value}": use json or text`);
  }
  return value;
}

export function guarded<A extends unknown[]>(setExitCode: (code: number) => void, fn: (...args: A) => Promise<void>) {
  return async (...args: A): Promise<void> => {
    try {
      await fn(...args);
    } catch (err) {
      setExitCode(reportError(err));
    }
  };
}

function withFormat(cmd: Command): Command {
  return cmd.option('--format <format>', 'output format: json or text', undefined).option('-o, --output <format>', 'same as --format');
}

/** `thv registry list|info`: what the configured registry (or the built-in catalog) offers. */
export function registerRegistryCommand(program: Command, setExitCode: (code: number) => void): void {
  const registry = program.command('registry').description('Browse the MCP server registry (configure it with thv config set-registry)');

  withFormat(registry.command('list').description('List the servers in the registry').allowExcessArguments(false)).action(
    guarded(setExitCode, async (opts: { format?: string; output?: string }) => {
      const format = outputFormat(opts);
      const entries = await (await configuredProvider()).list();
      if (format === 'json') {
        process.stdout.write(`${JSON.stringify(entries.map(entryToJson), null, 2)}\n`);
      } else if (entries.length === 0) {
        process.stdout.write('No servers found in the registry\n');
      } else {
        process.stdout.write(entriesTable(entries));
      }
    }),
  );

  withFormat(
    registry.command('info').argument('<server>', 'full or short server name').description('Show one server of the registry').allowExcessArguments(false),
  ).action(
    guarded(setExitCode, async (name: string, opts: { format?: string; output?: string }) => {
      const format = outputFormat(opts);
      const provider = await configuredProvider();
      const entry = await provider.get(name);
      if (entry === undefined) {
        throw new ThvError(ErrorCodes.NotFound, `server ${name} not found in the registry`, { hint: `search with: thv search ${name}` });
      }
      process.stdout.write(format === 'json' ? `${JSON.stringify(entryToJson(entry), null, 2)}\n` : entryText(entry));
    }),
  );
}
