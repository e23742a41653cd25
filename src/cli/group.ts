import type { Command } from 'commander';
import { guardedAction } from './output.js';

/** `thv group create|list|rm` (spec §5.6). */
export function registerGroupCommand(program: Command, setExitCode: (code: number) => void): void {
  const group = program.command('group').description('Manage groups of workloads');
  const guarded = guardedAction(setExitCode);
  group
    .command('create')
    .description('Create a group')
    .argument('<name>', 'group name')
    .action(
      guarded(async (name: string) => {
        const { createGroup } = await import('../workloads/groups.js');
        await createGroup(name);
        process.stdout.write(`Group '${name}' created successfully.\n`);
      }),
    );
  group
    .command('list')
    .alias('ls')
    .description('List groups')
    .action(
      guarded(async () => {
        const { listGroups } = await import('../workloads/groups.js');
        const names = await listGroups();
        process.stdout.write(['NAME', ...names].join('\n') + '\n');
      }),
    );
  group
    .command('rm')
    .description('Remove a group; its workloads move to "default" unless --with-workloads removes them too')
    .argument('<name>', 'group name')
    .option('--with-workloads', 'also remove the group\'s workloads')
    .action(
      guarded(async (name: string, opts: { withWorkloads?: boolean }) => {
        const { removeGroup } = await import('../workloads/group-ops.js');
        const moved = await removeGroup(name, { withWorkloads: opts.withWorkloads === true });
        const what = opts.withWorkloads ? `removed ${moved.length} workload(s)` : `moved ${moved.length} workload(s) to 'default'`;
        process.stdout.write(`Group '${name}' deleted successfully (${what}).\n`);
      }),
    );
}
