/**
 * Groups (spec §5.6, ToolHive `pkg/groups`): `groups/<name>.json` = `{"name","registered_clients":[]}`.
 * The `default` group always exists (created on first use, as ToolHive's start-up migration does).
 * A workload's group is recorded only in its RunConfig (`group`).
 */
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { ErrorCodes, ThvError } from '../errors.js';
import { withFileLock, writeFileAtomic } from '../secrets/atomic-file.js';
import { groupPath, workloadPaths } from './paths.js';

export const DEFAULT_GROUP = 'default';
/** ToolHive hides its optimizer group from `group list`. */
const HIDDEN_GROUPS = new Set(['__mcp-optimizer__']);

export function groupNameProblem(group: string): string | undefined {
  if (group === '') return 'group name cannot be empty';
  if (!/^[a-z0-9_-]+( [a-z0-9_-]+)*$/.test(group)) {
    return 'group name must use lowercase letters, digits, "_", "-" and single spaces, without leading or trailing spaces';
  }
  return undefined;
}

function validate(group: string): void {
  const problem = groupNameProblem(group);
  if (problem !== undefined) throw new ThvError(ErrorCodes.InvalidArgument, `invalid group name ${JSON.stringify(group)}: ${problem}`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

async function writeGroup(group: string, env?: NodeJS.ProcessEnv): Promise<void> {
  await writeFileAtomic(groupPath(group, env), JSON.stringify({ name: group, registered_clients: [] }, null, 2) + '\n', 0o600, 0o750);
}

export async function ensureDefaultGroup(env?: NodeJS.ProcessEnv): Promise<void> {
  if (await exists(groupPath(DEFAULT_GROUP, env))) return;
  await withFileLock(groupPath(DEFAULT_GROUP, env), async () => {
    if (!(await exists(groupPath(DEFAULT_GROUP, env)))) await writeGroup(DEFAULT_GROUP, env);
  });
}

export async function groupExists(group: string, env?: NodeJS.ProcessEnv): Promise<boolean> {
  if (group === DEFAULT_GROUP) return true;
  return exists(groupPath(group, env));
}

export async function requireGroup(group: string, env?: NodeJS.ProcessEnv): Promise<void> {
  validate(group);
  if (group === DEFAULT_GROUP) return ensureDefaultGroup(env);
  if (!(await groupExists(group, env))) {
    throw new ThvError(ErrorCodes.NotFound, `group '${group}' does not exist`, { hint: `create it with: thv group create ${group}` });
  }
}

export async function createGroup(group: string, env?: NodeJS.ProcessEnv): Promise<void> {
  validate(group);
  await withFileLock(groupPath(group, env), async () => {
    if (await exists(groupPath(group, env))) {
      throw new ThvError(ErrorCodes.AlreadyExists, `group '${group}' already exists`);
    }
    await writeGroup(group, env);
  });
}

export async function listGroups(env?: NodeJS.ProcessEnv): Promise<string[]> {
  await ensureDefaultGroup(env);
  const entries = await readdir(workloadPaths(env).groups);
  const names: string[] = [];
  for (const e of entries) {
    if (!e.endsWith('.json') || e.startsWith('.')) continue;
    try {
      const doc = JSON.parse(await readFile(`${workloadPaths(env).groups}/${e}`, 'utf8')) as { name?: unknown };
      const name = typeof doc.name === 'string' ? doc.name : e.slice(0, -5);
      if (!HIDDEN_GROUPS.has(name)) names.push(name);
    } catch {
      // An unreadable group file is not a group.
    }
  }
  return names.sort();
}

export async function deleteGroupFile(group: string, env?: NodeJS.ProcessEnv): Promise<void> {
  if (group === DEFAULT_GROUP) throw new ThvError(ErrorCodes.InvalidArgument, 'cannot delete the default group');
  if (!(await exists(groupPath(group, env)))) throw new ThvError(ErrorCodes.NotFound, `group '${group}' does not exist`);
  await rm(groupPath(group, env), { force: true });
}
