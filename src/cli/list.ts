import type { Command } from 'commander';
import { ErrorCodes, ThvError } from '../errors.js';
import { reportError } from './output.js';

/** `YYYY-MM-DD HH:MM:SS` (UTC) for the text table. */
export function shortTime(iso: string): string {
  return iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '') : '';
}

/** Left-aligned columns separated by two spaces (Go's tabwriter look). */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]! + 2))).join('').trimEnd()).join('\n') + '\n';
}

function parseLabels(values: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const i = v.indexOf('=');
    if (i <= 0) throw new ThvError(ErrorCodes.InvalidArgument, `invalid label filter ${JSON.stringify(v)}: expected key=value`);
    out[v.slice(0, i)] = v.slice(i + 1);
  }
  return out;
}

/** `thv list` / `thv ls` (spec §5.2). `--output` is the name for ToolHive's `--format`. */
export function registerListCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command('list')
    .alias('ls')
    .description('List MCP server workloads (running ones unless --all)')
    .option('-a, --all', 'include workloads that are not running')
    .option('-o, --output <format>', 'json, text or mcpservers')
    .option('--format <format>', 'same as --output (ToolHive\'s name)')
    .option('--group <group>', 'only workloads of this group')
    .option('-l, --label <key=value>', 'only workloads with this label (repeatable; all must match)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .action(async (opts: { all?: boolean; output?: string; format?: string; group?: string; label: string[] }) => {
      try {
        const format = opts.output ?? opts.format ?? 'text';
        if (!['json', 'text', 'mcpservers'].includes(format)) {
          throw new ThvError(ErrorCodes.InvalidArgument, `invalid format ${JSON.stringify(format)}: expected json, text or mcpservers`);
        }
        const { listWorkloads } = await import('../workloads/list.js');
        const workloads = await listWorkloads({ all: opts.all === true, group: opts.group, labels: parseLabels(opts.label) });
        if (format === 'json') {
          process.stdout.write(JSON.stringify(workloads, null, 2) + '\n');
        } else if (format === 'mcpservers') {
          const servers: Record<string, { url: string; type: string }> = {};
          for (const w of workloads) servers[w.name] = { url: w.url, type: w.proxy_mode || w.transport_type };
          process.stdout.write(JSON.stringify({ mcpServers: servers }, null, 2) + '\n');
        } else if (workloads.length === 0) {
          process.stdout.write('No MCP servers found\n');
        } else {
          const rows = [['NAME', 'PACKAGE', 'STATUS', 'URL', 'PORT', 'GROUP', 'CREATED']];
          for (const w of workloads) rows.push([w.name, w.package, w.status, w.url, String(w.port), w.group, shortTime(w.created_at)]);
          process.stdout.write(table(rows));
        }
      } catch (err) {
        setExitCode(reportError(err));
      }
    });
}
