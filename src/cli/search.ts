import type { Command } from 'commander';
import { configuredProvider } from '../registry/index.js';
import { entriesTable, entryToJson } from '../registry/present.js';
import { guarded, outputFormat } from './registry.js';

/** `thv search <query>`: servers whose name, title, description, tags or tools contain the query. */
export function registerSearchCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command('search')
    .argument('<query>', 'text to look for')
    .description('Search the registry for MCP servers')
    .option('--format <format>', 'output format: json or text')
    .option('-o, --output <format>', 'same as --format')
    .allowExcessArguments(false)
    .action(
      guarded(setExitCode, async (query: string, opts: { format?: string; output?: string }) => {
        const format = outputFormat(opts);
        const entries = await (await configuredProvider()).search(query);
        if (format === 'json') {
          process.stdout.write(`${JSON.stringify(entries.map(entryToJson), null, 2)}\n`);
        } else if (entries.length === 0) {
          process.stdout.write(`No servers found matching query: ${query}\n`);
        } else {
          process.stdout.write(`Found ${entries.length} servers matching query: ${query}\n`);
          process.stdout.write(entriesTable(entries));
        }
      }),
    );
}
