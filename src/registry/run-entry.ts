import { ErrorCodes, ThvError } from '../errors.js';
import type { RegistryServerInfo } from '../config/build-run-config.js';
import type { RuntimeKind } from '../config/run-config.js';
import type { RegistryProvider } from './providers.js';
import type { RegistryEntry } from './types.js';

/** What `thv run <registry name>` needs from the registry: the entry, and what to run for this runtime. */
export interface RegistryRunPlan {
  entry: RegistryEntry;
  /** For buildRunConfig's `context.registry`. */
  info: RegistryServerInfo;
  /** For buildRunConfig's `context.image`: what the runtime runs (npx://…, uvx://… or an image). */
  image?: string;
}

function describeSource(provider: RegistryProvider): string {
  const { kind, location } = provider.source;
  return kind === 'builtin' ? 'the built-in catalog' : `the registry at ${location}`;
}

/**
 * Looks the argument up in the registry (spec §1.2 step 4). Undefined when the argument is not a registry
 * name, so the caller can treat it as an image — except on the process runtime, which cannot run images,
 * where "not found" is the clearer error.
 */
export async function planRegistryRun(
  provider: RegistryProvider,
  query: string,
  runtime: RuntimeKind | undefined,
): Promise<RegistryRunPlan | undefined> {
  const entry = await provider.get(query);
  if (entry === undefined) {
    if (runtime === 'process') {
      throw new ThvError(ErrorCodes.NotFound, `no MCP server named "${query}" in ${describeSource(provider)}`, {
        hint:
          'find one with: thv search <word>. The process runtime runs registry servers published as npm or PyPI ' +
          'packages, npx://, uvx://, go:// packages and local executables (./path); container images need a container engine',
      });
    }
    return undefined;
  }
  const info: RegistryServerInfo = {
    name: entry.name,
    transport: entry.transport,
    targetPort: entry.targetPort,
    proxyPort: entry.proxyPort,
    args: entry.args,
    tools: entry.tools.length > 0 ? entry.tools : undefined,
    permissions: entry.permissions,
    registryApiUrl: provider.source.kind === 'api' ? provider.source.location : undefined,
    registryUrl: provider.source.kind === 'url' ? provider.source.location : undefined,
  };
  if (entry.kind === 'remote') return { entry, info: { ...info, remoteUrl: entry.url } };
  info.image = entry.image;
  // Packages run through their launcher; a container runtime prefers the image when there is one.
  const pkg = entry.npmPackage !== undefined ? `npx://${entry.npmPackage}` : entry.pypiPackage !== undefined ? `uvx://${entry.pypiPackage}` : undefined;
  if (runtime === 'process') {
    if (pkg === undefined) {
      throw new ThvError(ErrorCodes.InvalidArgument, `${entry.name} is published only as a container image (${entry.image ?? 'no image'}), which the process runtime cannot run`, {
        hint: 'run it with a container engine (--runtime docker)',
      });
    }
    return { entry, info, image: pkg };
  }
  return { entry, info, image: entry.image ?? pkg };
}
