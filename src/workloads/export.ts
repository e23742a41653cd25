/**
 * `thv export <name> <path>` (spec §5.6): the saved RunConfig as JSON (what `thv run --from-config`
 * reads; it holds secret references only), or a Kubernetes `MCPServer` resource with `--format k8s`.
 */
import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { RunConfig } from '../config/run-config.js';
import { ErrorCodes, ThvError } from '../errors.js';
import { loadRunConfig, serializeRunConfig } from './runconfig-store.js';

export type ExportFormat = 'json' | 'k8s';

/** ToolHive's k8s export: `toolhive.stacklok.dev/v1beta1` `MCPServer`; returns the object and what it left out. */
export function toMcpServerResource(config: RunConfig): { resource: Record<string, unknown>; omitted: string[] } {
  const omitted: string[] = [];
  if ((config.secrets ?? []).length > 0) omitted.push('secrets');
  if (config.telemetry_config !== undefined) omitted.push('telemetry');
  if (config.oidc_config !== undefined) omitted.push('OIDC');
  const standard = (k: string) => k === 'MCP_TRANSPORT' || k === 'MCP_PORT' || k === 'FASTMCP_PORT';
  const env = Object.entries(config.env_vars ?? {})
    .filter(([k]) => !standard(k))
    .map(([name, value]) => ({ name, value }));
  const spec: Record<string, unknown> = {
    image: config.image,
    transport: config.transport,
    ...(config.transport === 'stdio' ? { proxyMode: config.proxy_mode ?? 'streamable-http' } : {}),
    ...(config.port ? { proxyPort: config.port } : {}),
    ...(config.target_port ? { mcpPort: config.target_port } : {}),
    ...((config.cmd_args ?? []).length > 0 ? { args: config.cmd_args } : {}),
    ...(env.length > 0 ? { env } : {}),
    ...(config.tools_filter ? { toolsFilter: config.tools_filter } : {}),
  };
  return { resource: { apiVersion: 'toolhive.stacklok.dev/v1beta1', kind: 'MCPServer', metadata: { name: config.name }, spec }, omitted };
}

export async function exportWorkload(
  name: string,
  path: string,
  format: string,
  options: { env?: NodeJS.ProcessEnv; warn?: (msg: string) => void } = {},
): Promise<void> {
  if (format !== 'json' && format !== 'k8s') {
    throw new ThvError(ErrorCodes.InvalidArgument, `invalid format ${JSON.stringify(format)}: expected json or k8s`);
  }
  const config = await loadRunConfig(name, options.env).catch((err: unknown) => {
    throw new ThvError(ErrorCodes.InvalidConfig, `failed to load run configuration for workload '${name}': ${(err as Error).message}`);
  });
  if (config === undefined) {
    throw new ThvError(ErrorCodes.NotFound, `failed to load run configuration for workload '${name}': workload not found`);
  }
  let text: string;
  if (format === 'json') {
    text = serializeRunConfig(config);
  } else {
    const { stringify } = await import('yaml');
    const { resource, omitted } = toMcpServerResource(config);
    if (omitted.length > 0) options.warn?.(`Warning: the k8s export does not carry ${omitted.join(', ')}; configure them on the cluster`);
    text = stringify(resource);
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o750 });
  const handle = await open(path, 'w', 0o600);
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}
