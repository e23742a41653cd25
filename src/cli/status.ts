import type { Command } from 'commander';
import { ErrorCodes, ThvError } from '../errors.js';
import { reportError } from './output.js';
import { shortTime } from './list.js';

function uptime(startedAt: string): string {
  if (!startedAt) return '';
  let s = Math.max(0, Math.floor((Date.now() - Date.parse(startedAt)) / 1000));
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}

/** `thv status <name>` (spec §5.6): one workload in detail. */
export function registerStatusCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command('status')
    .description('Show the status of one MCP server workload')
    .argument('<name>', 'workload name')
    .option('-o, --output <format>', 'json or text')
    .option('--format <format>', 'same as --output')
    .action(async (name: string, opts: { output?: string; format?: string }) => {
      try {
        const format = opts.output ?? opts.format ?? 'text';
        if (format !== 'json' && format !== 'text') throw new ThvError(ErrorCodes.InvalidArgument, `invalid format ${JSON.stringify(format)}: expected json or text`);
        const { getWorkload } = await import('../workloads/list.js');
        const w = await getWorkload(name);
        if (w === undefined) throw new ThvError(ErrorCodes.NotFound, `workload '${name}' not found`);
        if (format === 'json') {
          process.stdout.write(JSON.stringify(w, null, 2) + '\n');
          return;
        }
        const lines: Array<[string, string]> = [
          ['Name', w.name],
          ['Status', w.status],
          ...(w.status_context ? ([['Context', w.status_context]] as Array<[string, string]>) : []),
          ['Package', w.package],
          ['URL', w.url],
          ['Port', String(w.port)],
          ['Transport', w.transport_type],
          ['Proxy mode', w.proxy_mode],
          ['Group', w.group],
          ['Proxy PID', w.process_id ? String(w.process_id) : ''],
          ['Created', shortTime(w.created_at)],
          ['Uptime', uptime(w.started_at)],
        ];
        for (const [k, v] of lines) if (v !== '') process.stdout.write(`${(k + ':').padEnd(12)}${v}\n`);
      } catch (err) {
        setExitCode(reportError(err));
      }
    });
}
