/**
 * The container side of the workload lifecycle (src/workloads/runtime.ts): containers are found by
 * ToolHive's labels (`toolhive=true`, `toolhive-basename=<name>`), so `thv list`, `stop` and `rm` see them
 * after a restart of everything. Server containers are started by the proxy and removed when it stops;
 * what survives a killed proxy (an HTTP server keeps running) is removed by `stop` and `rm`, together with
 * the workload's networks.
 */
import type { RunConfig } from '../../config/run-config.js';
import type { ServerState, WorkloadRuntime } from '../../workloads/runtime.js';
import { statusOf } from './engine-errors.js';
import { EXTERNAL_NETWORK, internalNetworkName, removeNetwork } from './isolation.js';

async function engine() {
  const { engineClient } = await import('./client.js');
  return (await engineClient()).docker;
}

function baseName(config: RunConfig): string {
  return config.base_name ?? config.name;
}

/** Containers of a workload (by label), running or not. */
export async function workloadContainers(config: RunConfig): Promise<Array<{ Id: string; State: string; Names: string[] }>> {
  const docker = await engine();
  return docker.listContainers({ all: true, filters: { label: ['toolhive=true', `toolhive-basename=${baseName(config)}`] } });
}

/** Force-removes the workload's containers and networks; nothing of it is left in the engine. */
export async function removeWorkloadResources(config: RunConfig): Promise<void> {
  const docker = await engine();
  for (const c of await workloadContainers(config)) {
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch((err: unknown) => {
        if (statusOf(err) !== 404 && statusOf(err) !== 409) throw err;
      });
  }
  // Isolation sidecars carry their own names as base names.
  for (const sidecar of ['egress', 'ingress', 'dns']) {
    await docker
      .getContainer(`${config.container_name ?? config.name}-${sidecar}`)
      .remove({ force: true })
      .catch((err: unknown) => {
        if (statusOf(err) !== 404 && statusOf(err) !== 409) throw err;
      });
  }
  await removeNetwork(docker, internalNetworkName(config.container_name ?? config.name));
  // The shared external network goes with the last toolhive container (spec §4.3); in use → kept.
  const rest = await docker.listContainers({ all: true, filters: { label: ['toolhive=true'] } });
  if (rest.length === 0) await removeNetwork(docker, EXTERNAL_NETWORK);
}

export const dockerWorkloadRuntime: WorkloadRuntime = {
  kind: 'docker',
  async serverState(config: RunConfig): Promise<ServerState> {
    const containers = await workloadContainers(config);
    // No container is normal while the proxy runs a per-session stdio server with no session yet.
    if (containers.some((c) => c.State === 'running')) return 'running';
    return 'follows-proxy';
  },
  stopServer: (config) => removeWorkloadResources(config),
  removeServer: (config) => removeWorkloadResources(config),
};
