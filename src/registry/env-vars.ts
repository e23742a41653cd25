import { ErrorCodes, ThvError } from '../errors.js';
import type { RunConfig } from '../config/run-config.js';
import { formatSecretRef, parseSecretRef, type SecretsProvider } from '../secrets/index.js';
import { canPrompt, promptHidden, promptVisible } from '../secrets/prompt.js';
import type { EnvVarDecl } from './types.js';

/**
 * Applies a registry entry's environment-variable declarations to a built RunConfig (spec §1.5 step 9):
 * a variable already given (-e, --env-file, --env-file-dir, or a --secret targeting it) is left alone;
 * a missing required one is looked up in the secrets store under its own name (secret variables), then
 * asked for on a terminal, else the run fails naming the variable and how to pass it; an optional one
 * with a default gets the default.
 *
 * Secret values never go into `env_vars`: a prompted secret is stored in the secrets provider as
 * `registry-user-<lower(name)>` (ToolHive's name) and referenced from `secrets`.
 */
export interface RegistryEnvOptions {
  env?: NodeJS.ProcessEnv;
  /** The user's secrets provider, or a function that throws when none is configured. */
  secretsProvider: () => Promise<SecretsProvider>;
}

function missingError(serverName: string, decl: EnvVarDecl): ThvError {
  const what = decl.description ? ` (${decl.description})` : '';
  return new ThvError(ErrorCodes.InvalidArgument, `missing required environment variable: ${decl.name}${what} for ${serverName}`, {
    hint: decl.secret
      ? `store it with "thv secret set ${decl.name}" (thv looks it up by that name), or pass --secret <name>,target=${decl.name} or -e ${decl.name}=<value>`
      : `pass it with -e ${decl.name}=<value> (or --env-file)`,
  });
}

async function tryProvider(get: () => Promise<SecretsProvider>): Promise<SecretsProvider | undefined> {
  try {
    return await get();
  } catch {
    return undefined;
  }
}

export async function applyRegistryEnvVars(
  config: RunConfig,
  serverName: string,
  decls: readonly EnvVarDecl[],
  options: RegistryEnvOptions,
): Promise<RunConfig> {
  const env = { ...(config.env_vars ?? {}) };
  const secrets = [...(config.secrets ?? [])];
  const targeted = new Set(secrets.map((r) => parseSecretRef(r).target));
  const given = (name: string): boolean => Object.hasOwn(env, name) || targeted.has(name);

  for (const decl of decls) {
    if (given(decl.name)) continue;
    if (!decl.required) {
      if (decl.default !== undefined && !decl.secret) env[decl.name] = decl.default;
      continue;
    }
    if (decl.secret) {
      // A secret stored under the variable's own name, or under the name a previous prompt stored it as.
      const provider = await tryProvider(options.secretsProvider);
      if (provider !== undefined && provider.type !== 'none') {
        const found = await firstExisting(provider, [decl.name, `registry-user-${decl.name.toLowerCase()}`]);
        if (found !== undefined) {
          secrets.push(formatSecretRef({ name: found, target: decl.name }));
          continue;
        }
      }
    }
    if (!canPrompt(options.env)) throw missingError(serverName, decl);
    const question = `${serverName} needs ${decl.name}${decl.description ? ` (${decl.description})` : ''}: `;
    const value = decl.secret ? await promptHidden(question) : await promptVisible(question);
    if (value === '') throw missingError(serverName, decl);
    if (!decl.secret) {
      env[decl.name] = value;
      continue;
    }
    const provider = await options.secretsProvider(); // throws "secrets provider not configured" with its hint
    const name = `registry-user-${decl.name.toLowerCase()}`;
    await provider.set(name, value);
    secrets.push(formatSecretRef({ name, target: decl.name }));
  }
  return { ...config, env_vars: env, secrets: secrets.length > 0 ? secrets : undefined };
}

async function firstExisting(provider: SecretsProvider, names: string[]): Promise<string | undefined> {
  for (const name of names) {
    try {
      await provider.get(name);
      return name;
    } catch (err) {
      if (!(err instanceof ThvError && err.code === ErrorCodes.NotFound)) throw err;
    }
  }
  return undefined;
}
