/**
 * Where workload state lives (spec §1.7), ToolHive's layout so a ToolHive user finds their files:
 * run configurations and groups under `$XDG_STATE_HOME/toolhive`, statuses (with their lock files) and
 * proxy logs under `$XDG_DATA_HOME/toolhive`.
 */
import { join } from 'node:path';
import { toolhiveDir } from '../secrets/xdg.js';

export interface WorkloadPaths {
  runconfigs: string;
  groups: string;
  statuses: string;
  logs: string;
}

export function workloadPaths(env: NodeJS.ProcessEnv = process.env): WorkloadPaths {
  const state = toolhiveDir('state', env);
  const data = toolhiveDir('data', env);
  return {
    runconfigs: join(state, 'runconfigs'),
    groups: join(state, 'groups'),
    statuses: join(data, 'statuses'),
    logs: join(data, 'logs'),
  };
}

export function runConfigPath(name: string, env?: NodeJS.ProcessEnv): string {
  return join(workloadPaths(env).runconfigs, `${name}.json`);
}

export function statusPath(name: string, env?: NodeJS.ProcessEnv): string {
  return join(workloadPaths(env).statuses, `${name}.json`);
}

/** The lock guarding one workload's status (ToolHive: `statuses/<name>.lock`). */
export function lockBase(name: string, env?: NodeJS.ProcessEnv): string {
  return join(workloadPaths(env).statuses, name);
}

export function logPath(name: string, env?: NodeJS.ProcessEnv): string {
  return join(workloadPaths(env).logs, `${name}.log`);
}

export function groupPath(group: string, env?: NodeJS.ProcessEnv): string {
  return join(workloadPaths(env).groups, `${group}.json`);
}
