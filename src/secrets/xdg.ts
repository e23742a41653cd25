import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * ToolHive's file locations (spec §1.7): the XDG base directories with a `toolhive` folder, so a ToolHive
 * user finds their files where they expect them. A relative XDG_* value is ignored, as the XDG spec says.
 */
export type XdgKind = 'config' | 'data' | 'state' | 'cache';

const XDG_VARS: Readonly<Record<XdgKind, readonly [string, string]>> = {
  config: ['XDG_CONFIG_HOME', '.config'],
  data: ['XDG_DATA_HOME', '.local/share'],
  state: ['XDG_STATE_HOME', '.local/state'],
  cache: ['XDG_CACHE_HOME', '.cache'],
};

/** `$XDG_<KIND>_HOME/toolhive` (or the default under the home directory). */
export function toolhiveDir(kind: XdgKind, env: NodeJS.ProcessEnv = process.env): string {
  const [variable, fallback] = XDG_VARS[kind];
  const base = env[variable];
  const root = base !== undefined && base !== '' && isAbsolute(base) ? base : join(env.HOME || homedir(), fallback);
  return join(root, 'toolhive');
}

/** `$XDG_CONFIG_HOME/toolhive/config.yaml`. */
export function appConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(toolhiveDir('config', env), 'config.yaml');
}

/** `$XDG_DATA_HOME/toolhive/secrets_encrypted`. */
export function encryptedSecretsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(toolhiveDir('data', env), 'secrets_encrypted');
}
