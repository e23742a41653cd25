/**
 * Saved run configurations (spec §1.6/§1.7): `runconfigs/<base_name>.json`, ToolHive's RunConfig JSON with
 * two-space indentation, written atomically (mode 0600, directory 0750). Only secret *references* are
 * ever in it: the builder keeps literal secrets in memory (see config/build-run-config.ts).
 */
import { readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { ErrorCodes, ThvError } from '../errors.js';
import type { RunConfig } from '../config/run-config.js';
import { writeFileAtomic } from '../secrets/atomic-file.js';
import { runConfigPath, workloadPaths } from './paths.js';

export const RUN_CONFIG_SCHEMA_VERSION = 'v0.1.0';

/** The workload's state-file name (ToolHive: base_name, falling back to name). */
export function workloadKey(config: RunConfig): string {
  return config.base_name || config.name;
}

export function serializeRunConfig(config: RunConfig): string {
  return JSON.stringify(config, null, 2) + '\n';
}

/**
 * Parses RunConfig JSON (an exported file or saved state) with ToolHive's read-side defaults: missing
 * schema version filled in, `proxy_mode` normalised. Throws InvalidConfig naming `source`.
 */
export function parseRunConfig(text: string, source: string): RunConfig {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ThvError(ErrorCodes.InvalidConfig, `failed to parse run configuration ${source}: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new ThvError(ErrorCodes.InvalidConfig, `run configuration ${source} must hold a JSON object`);
  }
  const config = doc as RunConfig;
  if (typeof config.name !== 'string' || config.name === '') {
    throw new ThvError(ErrorCodes.InvalidConfig, `run configuration ${source} has no "name"`);
  }
  if (typeof config.image !== 'string' && typeof config.remote_url !== 'string') {
    throw new ThvError(ErrorCodes.InvalidConfig, `run configuration ${source} has neither "image" nor "remote_url"`);
  }
  if (!['stdio', 'sse', 'streamable-http'].includes(config.transport)) {
    throw new ThvError(ErrorCodes.InvalidConfig, `run configuration ${source}: unsupported transport ${JSON.stringify(config.transport)}`);
  }
  config.schema_version ||= RUN_CONFIG_SCHEMA_VERSION;
  config.host ||= '127.0.0.1';
  if (!Number.isInteger(config.port) || config.port < 0) config.port = 0;
  if (config.transport !== 'stdio') config.proxy_mode = config.transport;
  else if (config.proxy_mode !== 'sse') config.proxy_mode = 'streamable-http';
  return config;
}

export async function saveRunConfig(config: RunConfig, env?: NodeJS.ProcessEnv): Promise<void> {
  await writeFileAtomic(runConfigPath(workloadKey(config), env), serializeRunConfig(config), 0o600, 0o750);
}

export async function loadRunConfig(name: string, env?: NodeJS.ProcessEnv): Promise<RunConfig | undefined> {
  const path = runConfigPath(name, env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8'); // synchronous: see status.ts
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return parseRunConfig(text, path);
}

export async function requireRunConfig(name: string, env?: NodeJS.ProcessEnv): Promise<RunConfig> {
  const config = await loadRunConfig(name, env);
  if (config === undefined) {
    throw new ThvError(ErrorCodes.NotFound, `failed to load run configuration for workload '${name}': workload not found`);
  }
  return config;
}

export async function deleteRunConfig(name: string, env?: NodeJS.ProcessEnv): Promise<void> {
  await rm(runConfigPath(name, env), { force: true });
}

export async function listRunConfigNames(env?: NodeJS.ProcessEnv): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(workloadPaths(env).runconfigs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return entries.filter((e) => e.endsWith('.json') && !e.startsWith('.')).map((e) => e.slice(0, -'.json'.length));
}
