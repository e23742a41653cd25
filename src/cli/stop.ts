import type { Command } from 'commander';
import { ErrorCodes, isThvError, ThvError } from '../errors.js';
import { reportError } from './output.js';

/** The workloads a multi-workload command acts on: names, `--all` (with a status filter) or `--group`. */
export async function selectWorkloads(
  names: string[],
  opts: { all?: boolean; group?: string },
  filter: { active: boolean },
): Promise<string[]> {
  const forms = [names.length > 0, opts.all === true, opts.group !== undefined].filter(Boolean).length;
  if (forms !== 1) throw new ThvError(ErrorCodes.InvalidArgument, 'give workload names, --all or --group (exactly one of them)');
  if (names.length > 0) return names;
  const { listWorkloads } = await import('../workloads/list.js');
  const list = await listWorkloads({ all: true, ...(opts.group !== undefined ? { group: opts.group } : {}) });
  // "Active" = anything with a proxy that may be alive (running, starting or restarting, unhealthy…).
  return list.filter((w) => !filter.active || (w.status !== 'stopped' && w.status !== 'error')).map((w) => w.name);
}

/** `thv stop` (spec §5.4): stops the proxy (and its server); the workload stays, `thv start` brings it back. */
export function registerStopCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command('stop')
    .description('Stop one or more MCP server workloads')
    .argument('[names...]', 'workload names')
    .option('-a, --all', 'stop all workloads that are not stopped')
    .option('--group <group>', 'stop the workloads of this group')
    .option('--timeout <seconds>', 'accepted for ToolHive compatibility (the stop itself is bounded)', '30')
    .action(async (names: string[], opts: { all?: boolean; group?: string }) => {
      try {
        const targets = await selectWorkloads(names, opts, { active: true });
        const { stopWorkload } = await import('../workloads/manager.js');
        let notRunning = false;
        let failed = 0;
        await Promise.all(
          targets.map(async (name) => {
            try {
              const result = await stopWorkload(name);
              if (result === 'not-running') notRunning = true;
              else process.stdout.write(`Stopped ${name}\n`);
            } catch (err) {
              if (isThvError(err, ErrorCodes.NotFound) || isThvError(err, ErrorCodes.InvalidArgument)) notRunning = true;
              else {
                failed += 1;
                reportError(err);
              }
            }
          }),
        );
        if (notRunning) process.stderr.write('one or more workloads are not running\n');
        if (targets.length === 0) process.stdout.write('No running MCP servers to stop\n');
        if (failed > 0) setExitCode(1);
      } catch (err) {
        setExitCode(reportError(err));
      }
    });
}
