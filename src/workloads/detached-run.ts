/**
 * `thv run` without `--foreground`, and `thv run --from-config <file>` (spec §1.4, §1.8, §1.10): settle
 * the ports (so the URL survives restarts), check that every `--secret` resolves (values are discarded),
 * claim the name, save the RunConfig, start the detached proxy, wait until it answers `initialize`, and
 * print the client URL in the same line format as the foreground run.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import type { RunConfig } from '../config/run-config.js';
import type { InMemorySecrets } from '../config/build-run-config.js';
import { ErrorCodes, ThvError } from '../errors.js';
import { detachedSecretsEnv, launchRegistered, prepareForeground, registerWorkload } from './manager.js';
import { parseRunConfig, workloadKey } from './runconfig-store.js';

function portAvailable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/** Picks free ports where the RunConfig says 0 and checks a requested proxy port (ToolHive's message). */
export async function settlePorts(config: RunConfig): Promise<RunConfig> {
  const [{ freePort }, { withResolvedPorts }] = await Promise.all([import('../proxy/net.js'), import('../config/build-run-config.js')]);
  const host = config.host || '127.0.0.1';
  if (config.port !== 0 && !(await portAvailable(host, config.port))) {
    throw new ThvError(ErrorCodes.AddressInUse, `requested proxy port ${config.port} is not available`);
  }
  const port = config.port !== 0 ? config.port : await freePort(host);
  const http = config.transport !== 'stdio' && config.remote_url === undefined;
  const targetPort = http ? config.target_port || (await freePort(config.target_host || '127.0.0.1')) : undefined;
  return withResolvedPorts(withAbsoluteImagePath(config), { port, ...(targetPort !== undefined ? { targetPort } : {}) });
}

/** A local server path is saved absolute, so `thv start` works from any directory. */
function withAbsoluteImagePath(config: RunConfig): RunConfig {
  const image = config.image;
  const local = image.startsWith('./') || image.startsWith('../') || image === '.' || image === '..';
  return local ? { ...config, image: resolve(image) } : config;
}

export async function runDetached(config: RunConfig, secrets: InMemorySecrets, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { inMemorySecretsToEnv } = await import('../config/build-run-config.js');
  const secretsEnv = await detachedSecretsEnv(config, env);
  const settled = await settlePorts(config);
  await registerWorkload(settled, { env });
  const started = await launchRegistered(settled, { env, childEnv: { ...inMemorySecretsToEnv(secrets), ...secretsEnv } });
  process.stdout.write(`MCP server ${started.name} is available at ${started.url}\n`);
  return 0;
}

export async function readRunConfigFile(path: string): Promise<RunConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ThvError(ErrorCodes.InvalidConfig, `failed to read run configuration ${path}: ${(err as Error).message}`);
  }
  return parseRunConfig(text, path);
}

/**
 * `--from-config`: the file is saved as the workload's state (replacing one of the same name, as ToolHive
 * does), then run detached, or in this process with `--foreground` (which does not delete it on exit).
 */
export async function runFromConfigFile(path: string, options: { foreground: boolean; env?: NodeJS.ProcessEnv }): Promise<number> {
  const env = options.env ?? process.env;
  const loaded = await readRunConfigFile(path);
  const secretsEnv = await detachedSecretsEnv(loaded, env);
  const config = loaded.port === 0 || (loaded.transport !== 'stdio' && !loaded.target_port) ? await settlePorts(loaded) : loaded;
  await registerWorkload(config, { env, replace: true });
  const name = workloadKey(config);
  if (!options.foreground) {
    const started = await launchRegistered(config, { env, childEnv: secretsEnv });
    process.stdout.write(`MCP server ${started.name} is available at ${started.url}\n`);
    return 0;
  }
  await prepareForeground(name, env);
  const { superviseWorkload } = await import('./supervisor.js');
  return superviseWorkload(name, {
    // A password typed above serves this process too (asked once).
    env: { ...env, ...secretsEnv },
    onReady: (url) => process.stdout.write(`MCP server ${name} is available at ${url}\n`),
  });
}
