import type { Command } from 'commander';
import { reportError } from './output.js';
import { selectWorkloads } from './stop.js';

/** `thv rm` (spec §5.5): stops the workload and deletes its RunConfig, status and log. */
export function registerRmCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command('rm')
    .alias('remove')
    .description('Remove one or more MCP server workloads')
    .argument('[names...]', 'workload names')
    .option('-a, --all', 'remove all workloads')
    .option('--group <group>', 'remove the workloads of this group')
    .action(async (names: string[], opts: { all?: boolean; group?: string }) => {
      try {
        const targets = await selectWorkloads(names, opts, { active: false });
        const { removeWorkload } = await import('../workloads/manager.js');
        let failed = 0;
        await Promise.all(
          targets.map(async (name) => {
            try {
              await removeWorkload(name);
              process.stdout.write(`Removed ${name}\n`);
            } catch (err) {
              failed += 1;
              reportError(err);
            }
          }),
        );
        if (failed > 0) setExitCode(1);
      } catch (err) {
        setExitCode(reportError(err));
      }
    });
}
