/** Registry client side: formats, built-in catalog, sources, lookup and what `thv run <name>` takes from it. */
export { configuredProvider, providerFromConfig, builtinProvider, fileProvider, urlProvider, apiProvider, type RegistryProvider } from './providers.js';
export { planRegistryRun, type RegistryRunPlan } from './run-entry.js';
export { applyRegistryEnvVars } from './env-vars.js';
export { parseRegistryDocument } from './parse.js';
export { RegistryApiClient } from './api-client.js';
export type { RegistryEntry, EnvVarDecl, RegistrySource } from './types.js';
