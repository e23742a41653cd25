import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { ErrorCodes, ThvError } from '../errors.js';
import { readFileIfExists, withFileLock, writeFileAtomic } from './atomic-file.js';
import { appConfigPath } from './xdg.js';

/**
 * ToolHive's application config, `$XDG_CONFIG_HOME/toolhive/config.yaml` (spec §6.3, §4.10). Only the keys
 * thv reads are typed; every other key is kept as found when the file is rewritten, so a config shared
 * with ToolHive keeps its client registrations, OTEL settings and so on.
 */
export interface AppConfig {
  secrets?: { provider_type?: string; setup_completed?: boolean };
  registry_url?: string;
  registry_api_url?: string;
  local_registry_path?: string;
  allow_private_registry_ip?: boolean;
  [key: string]: unknown;
}

function parseConfig(text: string, path: string): AppConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ThvError(ErrorCodes.InvalidConfig, `failed to parse ${path}: ${(err as Error).message}`, { cause: err });
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ThvError(ErrorCodes.InvalidConfig, `${path} must hold a YAML mapping`);
  }
  return doc as AppConfig;
}

/** The config, or `{}` when there is no file yet. */
export async function loadAppConfig(env: NodeJS.ProcessEnv = process.env): Promise<AppConfig> {
  const path = appConfigPath(env);
  const raw = await readFileIfExists(path);
  return raw === undefined ? {} : parseConfig(raw.toString('utf8'), path);
}

/** Read-modify-write under a lock, written atomically with mode 0600. Returns the new config. */
export async function updateAppConfig(
  mutate: (config: AppConfig) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<AppConfig> {
  const path = appConfigPath(env);
  return withFileLock(path, async () => {
    const raw = await readFileIfExists(path);
    const config = raw === undefined ? {} : parseConfig(raw.toString('utf8'), path);
    mutate(config);
    for (const key of Object.keys(config)) if (config[key] === undefined) delete config[key];
    await writeFileAtomic(path, stringifyYaml(config), 0o600);
    return config;
  });
}
