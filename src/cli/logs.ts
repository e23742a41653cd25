import type { Command } from 'commander';
import { reportError } from './output.js';

/** `thv logs <name>` (server output), `--proxy` (the proxy log), `--follow`; `thv logs prune`. */
export function registerLogsCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command('logs')
    .description('Show the logs of a workload: the server\'s output, or the proxy log with --proxy; "thv logs prune" deletes logs of removed workloads')
    .argument('<name>', 'workload name (or "prune")')
    .option('-f, --follow', 'keep printing new lines until interrupted')
    .option('-p, --proxy', 'show the proxy log instead of the server output')
    .action(async (name: string, opts: { follow?: boolean; proxy?: boolean }) => {
      try {
        const logs = await import('../workloads/logs.js');
        if (name === 'prune') {
          const pruned = await logs.pruneLogs();
          process.stdout.write(pruned.length === 0 ? 'No logs to prune\n' : pruned.map((n) => `Pruned logs of ${n}\n`).join(''));
          return;
        }
        await logs.showLogs(name, { proxy: opts.proxy === true, follow: opts.follow === true });
      } catch (err) {
        setExitCode(reportError(err));
      }
    });
}
