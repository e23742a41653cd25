import { request } from 'node:http';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ErrorCodes, ThvError } from '../errors.js';
import type { RuntimeKind } from '../config/run-config.js';

export type RuntimeChoice = 'auto' | RuntimeKind;

/**
 * Container engine sockets in ToolHive's order (Podman, Docker, Colima), after the override variables.
 * DOCKER_HOST, when set to a unix socket, is the only place looked at, as the Docker CLI does.
 */
export function candidateSockets(env: NodeJS.ProcessEnv = process.env): string[] {
  const dockerHost = env.DOCKER_HOST;
  if (dockerHost) return dockerHost.startsWith('unix://') ? [dockerHost.slice('unix://'.length)] : [];
  const home = homedir();
  const out: string[] = [];
  for (const v of ['TOOLHIVE_PODMAN_SOCKET', 'TOOLHIVE_DOCKER_SOCKET', 'TOOLHIVE_COLIMA_SOCKET']) {
    if (env[v]) out.push(env[v]!);
  }
  if (out.length > 0) return out;
  out.push('/var/run/podman/podman.sock');
  if (env.XDG_RUNTIME_DIR) out.push(join(env.XDG_RUNTIME_DIR, 'podman/podman.sock'));
  out.push(
    join(home, '.local/share/containers/podman/machine/podman.sock'),
    '/var/run/docker.sock',
    join(home, '.docker/run/docker.sock'),
    join(home, '.docker/desktop/docker.sock'),
    join(home, '.rd/docker.sock'),
    join(home, '.orbstack/run/docker.sock'),
    join(home, '.colima/default/docker.sock'),
  );
  return out;
}

/** The first socket whose engine answers `GET /_ping`, or undefined. An override naming a missing path is an error (as in ToolHive). */
export async function findContainerEngine(env: NodeJS.ProcessEnv = process.env, timeoutMs = 2000): Promise<string | undefined> {
  if (!env.DOCKER_HOST) {
    for (const v of ['TOOLHIVE_PODMAN_SOCKET', 'TOOLHIVE_DOCKER_SOCKET', 'TOOLHIVE_COLIMA_SOCKET']) {
      if (env[v] && !existsSync(env[v]!)) {
        throw new ThvError(ErrorCodes.RuntimeUnavailable, `${v} is set to ${env[v]}, which does not exist`, { hint: `unset ${v} or point it at the engine's socket` });
      }
    }
  }
  for (const socketPath of candidateSockets(env)) {
    if (!existsSync(socketPath)) continue;
    if (await ping(socketPath, timeoutMs)) return socketPath;
  }
  return undefined;
}

function ping(socketPath: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Decides the runtime: an explicit choice wins; `auto` takes a container engine when one answers. */
export async function selectRuntime(choice: RuntimeChoice, env: NodeJS.ProcessEnv = process.env): Promise<RuntimeKind> {
  if (choice === 'process') return 'process';
  const engine = await findContainerEngine(env);
  if (engine) return 'docker';
  if (choice === 'docker') {
    throw new ThvError(ErrorCodes.RuntimeUnavailable, 'no container engine answers (looked for Docker, Podman and Colima sockets)', {
      hint: 'start Docker or Podman, or set DOCKER_HOST',
    });
  }
  throw new ThvError(ErrorCodes.RuntimeUnavailable, 'no container engine found (looked for Docker, Podman and Colima sockets)', {
    hint: 'use --runtime process (or THV_RUNTIME=process) to run the MCP server as a local process; note that it then runs with your user\'s rights and gets no isolation',
  });
}
