import type { Command } from 'commander';
import { registerExportCommand } from './export.js';
import { registerGroupCommand } from './group.js';
import { registerListCommand } from './list.js';
import { registerLogsCommand } from './logs.js';
import { registerRestartCommand } from './restart.js';
import { registerRmCommand } from './rm.js';
import { registerStartCommand } from './start.js';
import { registerStatusCommand } from './status.js';
import { registerStopCommand } from './stop.js';

/** Lifecycle command names (and aliases); thv.ts loads nothing else when one of them is run. */
export const WORKLOAD_COMMANDS: ReadonlySet<string> = new Set([
  'list', 'ls', 'status', 'stop', 'start', 'restart', 'rm', 'remove', 'logs', 'export', 'group',
]);

export function registerWorkloadCommands(program: Command, setExitCode: (code: number) => void): void {
  registerListCommand(program, setExitCode);
  registerStatusCommand(program, setExitCode);
  registerStopCommand(program, setExitCode);
  registerStartCommand(program, setExitCode);
  registerRestartCommand(program, setExitCode);
  registerRmCommand(program, setExitCode);
  registerLogsCommand(program, setExitCode);
  registerExportCommand(program, setExitCode);
  registerGroupCommand(program, setExitCode);
}
