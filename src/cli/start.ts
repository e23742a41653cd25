import type { Command } from 'commander';
import { reportError } from './output.js';
import { selectWorkloads } from './stop.js';

type StartOpts = { all?: boolean; group?: string; foreground?: boolean };

/**
 * `thv start` and `thv restart` (spec §5.3). `start` leaves a running workload alone (same URL);
 * `restart` stops it first and starts it again on the same ports. `start <name> --foreground` serves
 * the workload in this process: it is what a detached launch runs in the background.
 */
export async function startAction(mode: 'start' | 'restart', names: string[], opts: StartOpts): Promise<number> {
  if (opts.foreground) {
    const { ErrorCodes, ThvError } = await import('../errors.js');
    if (names.length !== 1 || opts.all || opts.group !== undefined) {
      throw new ThvError(ErrorCodes.InvalidArgument, '--foreground takes exactly one workload name');
    }
    const name = names[0]!;
    const { prepareForeground } = await import('../workloads/manager.js');
    await prepareForeground(name);
    const { superviseWorkload } = await import('../workloads/supervisor.js');
    const detached = process.env.TOOLHIVE_DETACHED === '1';
    return superviseWorkload(name, {
      onReady: (url) => {
        if (!detached) process.stdout.write(`MCP server ${name} is available at ${url}\n`);
      },
    });
  }
  const targets = await selectWorkloads(names, opts, { active: false });
  const { startWorkload, restartWorkload } = await import('../workloads/manager.js');
  const multi = names.length === 0;
  let ok = 0;
  let failed = 0;
  await Promise.all(
    targets.map(async (name) => {
      try {
        if (multi) process.stdout.write(`Restarting ${name}...\n`);
        const started = mode === 'restart' ? await restartWorkload(name) : await startWorkload(name);
        ok += 1;
        if (started.alreadyRunning) process.stdout.write(`MCP server ${name} is already running at ${started.url}\n`);
        else process.stdout.write(`MCP server ${name} is available at ${started.url}\n`);
      } catch (err) {
        failed += 1;
        reportError(err);
      }
    }),
  );
  if (multi) process.stdout.write(`Restart summary: ${ok} succeeded, ${failed} failed\n`);
  return failed > 0 ? 1 : 0;
}

export function registerStartCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command('start')
    .description('Start (or resume) MCP server workloads; a running one is left as it is')
    .argument('[names...]', 'workload names')
    .option('-a, --all', 'all workloads')
    .option('--group <group>', 'the workloads of this group')
    .option('-f, --foreground', 'serve the workload in this process (one name)')
    .action(async (names: string[], opts: StartOpts) => {
      try {
        setExitCode(await startAction('start', names, opts));
      } catch (err) {
        setExitCode(reportError(err));
      }
    });
}
