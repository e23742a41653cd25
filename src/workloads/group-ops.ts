/**
 * `thv group rm` (spec §5.6): without `--with-workloads` the group's workloads move to `default` (their
 * RunConfig `group` is rewritten under their lock); with it they are removed.
 */
import { deleteGroupFile, requireGroup } from './groups.js';
import { removeWorkload } from './manager.js';
import { listRunConfigNames, loadRunConfig, saveRunConfig } from './runconfig-store.js';
import { withWorkloadLock } from './status.js';

export async function removeGroup(group: string, options: { withWorkloads: boolean; env?: NodeJS.ProcessEnv }): Promise<string[]> {
  const env = options.env;
  await requireGroup(group, env);
  const members: string[] = [];
  for (const name of await listRunConfigNames(env)) {
    const config = await loadRunConfig(name, env).catch(() => undefined);
    if (config?.group === group) members.push(name);
  }
  for (const name of members) {
    if (options.withWorkloads) {
      await removeWorkload(name, env);
    } else {
      await withWorkloadLock(
        name,
        async () => {
          const config = await loadRunConfig(name, env);
          if (config !== undefined) await saveRunConfig({ ...config, group: 'default' }, env);
        },
        env,
      );
    }
  }
  await deleteGroupFile(group, env);
  return members;
}
