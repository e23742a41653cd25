import type { Command } from 'commander';
import { reportError } from './output.js';

/** `thv export <name> <path> [--format json|k8s]` (spec §5.6). */
export function registerExportCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command('export')
    .description('Write a workload\'s run configuration to a file ("thv run --from-config <file>" runs it)')
    .argument('<name>', 'workload name')
    .argument('<path>', 'file to write')
    .option('--format <format>', 'json (a RunConfig) or k8s (an MCPServer resource)', 'json')
    .action(async (name: string, path: string, opts: { format: string }) => {
      try {
        const { exportWorkload } = await import('../workloads/export.js');
        await exportWorkload(name, path, opts.format, { warn: (m) => process.stderr.write(m + '\n') });
        process.stdout.write(`Successfully exported run configuration for '${name}' to '${path}'\n`);
      } catch (err) {
        setExitCode(reportError(err));
      }
    });
}
