import { readFile } from 'node:fs/promises';
import { ErrorCodes, ThvError } from '../errors.js';
import { loadAppConfig, type AppConfig } from '../secrets/app-config.js';
import { fetchRegistryDocument, RegistryApiClient } from './api-client.js';
import { BUILTIN_CATALOG } from './builtin-catalog.js';
import { findEntry, searchEntries, sortEntries } from './lookup.js';
import { assertPublicUrl } from './net-guard.js';
import { parseRegistryDocument } from './parse.js';
import type { RegistryEntry, RegistrySource } from './types.js';

/** A source of registry entries: the built-in catalog, a file, a JSON URL or a registry API. */
export interface RegistryProvider {
  readonly source: RegistrySource;
  list(): Promise<RegistryEntry[]>;
  /** Lookup by full or short name (spec §6.2); undefined when nothing matches. */
  get(query: string): Promise<RegistryEntry | undefined>;
  search(query: string): Promise<RegistryEntry[]>;
}

/** Providers over a whole document held in memory. */
class DocumentProvider implements RegistryProvider {
  private entries: Promise<RegistryEntry[]> | undefined;

  constructor(
    readonly source: RegistrySource,
    private readonly load: () => Promise<unknown>,
  ) {}

  private all(): Promise<RegistryEntry[]> {
    this.entries ??= this.load().then((doc) => parseRegistryDocument(doc, this.source.location || 'the built-in catalog'));
    return this.entries;
  }

  async list(): Promise<RegistryEntry[]> {
    return sortEntries(await this.all());
  }

  async get(query: string): Promise<RegistryEntry | undefined> {
    return findEntry(await this.all(), query);
  }

  async search(query: string): Promise<RegistryEntry[]> {
    return sortEntries(searchEntries(await this.all(), query));
  }
}

class ApiProvider implements RegistryProvider {
  readonly source: RegistrySource;
  private readonly client: RegistryApiClient;

  constructor(url: string, private readonly allowPrivate: boolean) {
    this.source = { kind: 'api', location: url };
    this.client = new RegistryApiClient(url);
  }

  async list(): Promise<RegistryEntry[]> {
    await assertPublicUrl(this.source.location, this.allowPrivate);
    return sortEntries(await this.client.list());
  }

  /** ToolHive's order: `io.github.stacklok/<q>`, then `<q>`, then a search matched by short or full name. */
  async get(query: string): Promise<RegistryEntry | undefined> {
    await assertPublicUrl(this.source.location, this.allowPrivate);
    if (!query.includes('/')) {
      const stacklok = await this.client.get(`io.github.stacklok/${query}`);
      if (stacklok !== undefined) return stacklok;
    }
    const direct = await this.client.get(query);
    if (direct !== undefined) return direct;
    return findEntry(await this.client.search(query), query);
  }

  async search(query: string): Promise<RegistryEntry[]> {
    await assertPublicUrl(this.source.location, this.allowPrivate);
    return sortEntries(await this.client.search(query));
  }
}

export function builtinProvider(): RegistryProvider {
  return new DocumentProvider({ kind: 'builtin', location: '' }, async () => BUILTIN_CATALOG);
}

export function fileProvider(path: string): RegistryProvider {
  return new DocumentProvider({ kind: 'file', location: path }, async () => {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new ThvError(ErrorCodes.InvalidConfig, `cannot read the local registry ${path}: ${(err as Error).message}`, {
        hint: 'fix the path with thv config set-registry <file>, or go back to the built-in catalog with thv config unset-registry',
      });
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new ThvError(ErrorCodes.InvalidConfig, `the local registry ${path} is not valid JSON: ${(err as Error).message}`);
    }
  });
}

export function urlProvider(url: string, allowPrivate: boolean): RegistryProvider {
  return new DocumentProvider({ kind: 'url', location: url }, async () => {
    await assertPublicUrl(url, allowPrivate);
    return fetchRegistryDocument(url);
  });
}

export function apiProvider(url: string, allowPrivate: boolean): RegistryProvider {
  return new ApiProvider(url, allowPrivate);
}

/** The configured source, in ToolHive's precedence: API URL → static URL → local file → built-in. */
export function providerFromConfig(config: AppConfig): RegistryProvider {
  const allowPrivate = config.allow_private_registry_ip === true;
  if (typeof config.registry_api_url === 'string' && config.registry_api_url !== '') return apiProvider(config.registry_api_url, allowPrivate);
  if (typeof config.registry_url === 'string' && config.registry_url !== '') return urlProvider(config.registry_url, allowPrivate);
  if (typeof config.local_registry_path === 'string' && config.local_registry_path !== '') return fileProvider(config.local_registry_path);
  return builtinProvider();
}

export async function configuredProvider(env: NodeJS.ProcessEnv = process.env): Promise<RegistryProvider> {
  return providerFromConfig(await loadAppConfig(env));
}
