import type { Command } from 'commander';
import { reportError } from './output.js';
import { startAction } from './start.js';

/** `thv restart`: stop, then start again on the same ports (ToolHive aliases it to start; see docs/workloads.md). */
export function registerRestartCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command('restart')
    .description('Restart MCP server workloads (same URL)')
    .argument('[names...]', 'workload names')
    .option('-a, --all', 'all workloads')
    .option('--group <group>', 'the workloads of this group')
    .option('-f, --foreground', 'serve the workload in this process (one name)')
    .action(async (names: string[], opts: { all?: boolean; group?: string; foreground?: boolean }) => {
      try {
        setExitCode(await startAction('restart', names, opts));
      } catch (err) {
        setExitCode(reportError(err));
      }
    });
}
