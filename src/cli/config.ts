import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { ErrorCodes, ThvError } from '../errors.js';
import { loadAppConfig, updateAppConfig } from '../secrets/app-config.js';
import { apiProvider, fileProvider, RegistryApiClient, urlProvider, type RegistryProvider } from '../registry/index.js';
import { assertPublicUrl } from '../registry/net-guard.js';
import { appConfigPath } from '../secrets/xdg.js';
import { guarded } from './registry.js';
import { registerOtelConfigCommands } from './config-otel.js';

type RegistryKind = 'api' | 'url' | 'file';

/** `set-registry`'s classification (spec §6.3): a file, a static JSON URL, or a registry API. */
async function classify(target: string, allowPrivate: boolean): Promise<{ kind: RegistryKind; location: string }> {
  let url: URL | undefined;
  try {
    url = new URL(target);
  } catch {
    url = undefined;
  }
  if (url === undefined || url.protocol === 'file:') {
    const path = url?.protocol === 'file:' ? fileURLToPath(url) : resolve(target);
    if (!existsSync(path)) throw new ThvError(ErrorCodes.NotFound, `local registry file not found: ${path}`);
    return { kind: 'file', location: path };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ThvError(ErrorCodes.InvalidArgument, `unsupported registry URL scheme ${url.protocol}`);
  }
  await assertPublicUrl(target, allowPrivate);
  if (url.pathname.endsWith('.json')) return { kind: 'url', location: target };
  return { kind: (await RegistryApiClient.probe(target)) ? 'api' : 'url', location: target.replace(/\/+$/, '') };
}

const DESCRIBE: Record<RegistryKind, string> = { api: 'registry API', url: 'remote registry file', file: 'local registry file' };

/** `thv config set-registry|get-registry|unset-registry` (config.yaml: registry_api_url, registry_url, local_registry_path). */
export function registerConfigCommand(program: Command, setExitCode: (code: number) => void): void {
  const config = program.command('config').summary('Manage thv configuration').description(`Manage thv configuration (${appConfigPath()})`);

  config
    .command('set-registry')
    .argument('<url-or-path>', 'registry API URL (e.g. http://host/registry/default), registry JSON URL, or local JSON file')
    .summary('Use another registry (API URL, JSON URL or file)')
    .description(
      'Use another registry instead of the built-in catalog. A local path or file:// URL is a registry file;\n' +
        'a URL ending in .json is a registry file served over HTTP; any other URL is probed for the MCP Registry\n' +
        'API (GET <url>/v0.1/servers) and used as a registry API when it answers, as a JSON file otherwise.',
    )
    .option('-p, --allow-private-ip', 'allow a registry on a private or loopback address', false)
    .allowExcessArguments(false)
    .action(
      guarded(setExitCode, async (target: string, opts: { allowPrivateIp: boolean }) => {
        const { kind, location } = await classify(target, opts.allowPrivateIp);
        // Validate before saving: the registry must load and hold at least one server.
        const provider: RegistryProvider =
          kind === 'api' ? apiProvider(location, opts.allowPrivateIp) : kind === 'url' ? urlProvider(location, opts.allowPrivateIp) : fileProvider(location);
        if (kind !== 'api') {
          const entries = await provider.list();
          if (entries.length === 0) throw new ThvError(ErrorCodes.InvalidConfig, `the registry at ${location} holds no servers`);
        }
        await updateAppConfig((c) => {
          c.registry_api_url = kind === 'api' ? location : undefined;
          c.registry_url = kind === 'url' ? location : undefined;
          c.local_registry_path = kind === 'file' ? location : undefined;
          c.allow_private_registry_ip = opts.allowPrivateIp || undefined;
          delete c['registry_auth'];
        });
        process.stdout.write(`Successfully set ${DESCRIBE[kind]}: ${location}\n`);
      }),
    );

  config
    .command('get-registry')
    .description('Show which registry thv uses')
    .allowExcessArguments(false)
    .action(
      guarded(setExitCode, async () => {
        const c = await loadAppConfig();
        const current: Array<[RegistryKind, unknown]> = [
          ['api', c.registry_api_url],
          ['url', c.registry_url],
          ['file', c.local_registry_path],
        ];
        const found = current.find(([, v]) => typeof v === 'string' && v !== '');
        if (found === undefined) process.stdout.write('Using the built-in registry\n');
        else process.stdout.write(`Current registry: ${String(found[1])} (${DESCRIBE[found[0]]})\n`);
      }),
    );

  config
    .command('unset-registry')
    .description('Go back to the built-in registry')
    .allowExcessArguments(false)
    .action(
      guarded(setExitCode, async () => {
        await updateAppConfig((c) => {
          for (const k of ['registry_api_url', 'registry_url', 'local_registry_path', 'allow_private_registry_ip', 'registry_auth']) delete c[k];
        });
        process.stdout.write('Successfully removed the registry configuration; using the built-in registry\n');
      }),
    );

  registerOtelConfigCommands(config, setExitCode);
}
