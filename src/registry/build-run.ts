import { buildRunConfig, type BuildRunConfigContext, type BuiltRunConfig } from '../config/build-run-config.js';
import { classifyServerArg } from '../config/naming.js';
import type { RunOptions } from '../config/run-options.js';
import { userSecretsProvider } from '../secrets/index.js';
import { applyRegistryEnvVars } from './env-vars.js';
import { configuredProvider, type RegistryProvider } from './providers.js';
import { planRegistryRun } from './run-entry.js';

/**
 * `buildRunConfig` with the registry in front (spec §1.2 step 4, §1.5 steps 7 and 9): a positional argument
 * that is neither a URL, a package scheme nor a path is looked up in the configured registry; an entry
 * supplies transport, ports, args, tools, permissions and (on the process runtime) the npm/PyPI package to
 * run, and its environment-variable declarations are then checked (prompting on a terminal).
 */
export async function buildRunConfigWithRegistry(
  options: RunOptions,
  serverArg: string,
  serverArgs: string[],
  context: BuildRunConfigContext & { provider?: RegistryProvider } = {},
): Promise<BuiltRunConfig> {
  if (classifyServerArg(serverArg).kind !== 'image-or-registry') return buildRunConfig(options, serverArg, serverArgs, context);
  const runtime = options.runtime === 'process' || options.runtime === 'docker' ? options.runtime : undefined;
  const plan = await planRegistryRun(context.provider ?? (await configuredProvider()), serverArg, runtime);
  if (plan === undefined) return buildRunConfig(options, serverArg, serverArgs, context);
  const built = buildRunConfig(options, serverArg, serverArgs, { ...context, registry: plan.info, image: plan.image ?? context.image });
  const decls = plan.entry.kind === 'remote' ? [] : plan.entry.envVars;
  built.config = await applyRegistryEnvVars(built.config, plan.entry.name, decls, { secretsProvider: () => userSecretsProvider() });
  return built;
}
