import { ErrorCodes, ThvError } from '../errors.js';
import { loadAppConfig } from './app-config.js';
import { EncryptedFileProvider } from './encrypted-provider.js';
import { EnvironmentProvider, envSecret, NoneProvider } from './environment-provider.js';
import { getSecretsPassword } from './password.js';
import { PROVIDER_TYPES, SYSTEM_SECRET_PREFIX, type ProviderType, type SecretsProvider } from './types.js';
import { encryptedSecretsPath } from './xdg.js';

export const PROVIDER_ENV = 'TOOLHIVE_SECRETS_PROVIDER';
export const DISABLE_ENV_FALLBACK = 'TOOLHIVE_DISABLE_ENV_FALLBACK';

export function parseProviderType(value: string): ProviderType {
  if ((PROVIDER_TYPES as readonly string[]).includes(value)) return value as ProviderType;
  throw new ThvError(ErrorCodes.InvalidArgument, `invalid secrets provider type: ${value} (valid types: encrypted, 1password, environment, none)`);
}

/**
 * Which provider to use (spec §4.10): TOOLHIVE_SECRETS_PROVIDER, else config.yaml `secrets.provider_type`
 * once set up (`thv secret provider <type>` sets it and `setup_completed`).
 */
export async function resolveProviderType(env: NodeJS.ProcessEnv = process.env): Promise<ProviderType> {
  const fromEnv = env[PROVIDER_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return parseProviderType(fromEnv);
  const config = await loadAppConfig(env);
  const configured = config.secrets?.provider_type;
  if (config.secrets?.setup_completed !== true || typeof configured !== 'string' || configured === '') {
    throw new ThvError(ErrorCodes.InvalidConfig, 'secrets provider not configured', {
      hint: `run "thv secret provider encrypted" (or "environment"), or set ${PROVIDER_ENV}`,
    });
  }
  return parseProviderType(configured);
}

function memo(fn: (creating: boolean) => Promise<string>): (creating: boolean) => Promise<string> {
  let cached: Promise<string> | undefined;
  return (creating) => (cached ??= fn(creating));
}

/** A provider of the given type (the encrypted one asks for its password only when the file is touched). */
export function createProvider(type: ProviderType, env: NodeJS.ProcessEnv = process.env): SecretsProvider {
  switch (type) {
    case 'encrypted':
      return new EncryptedFileProvider(encryptedSecretsPath(env), memo((creating) => getSecretsPassword({ env, creating })));
    case 'environment':
      return new EnvironmentProvider(env);
    case 'none':
      return new NoneProvider();
    case '1password':
      throw new ThvError(ErrorCodes.NotImplemented, 'the 1password secrets provider is not available in this version of thv', {
        hint: 'use "thv secret provider encrypted" or "environment"',
      });
  }
}

/**
 * The provider users see: reserved system names are refused and hidden from the list, and (as ToolHive
 * does) a secret missing from a non-environment provider is looked up as TOOLHIVE_SECRET_<NAME> unless
 * TOOLHIVE_DISABLE_ENV_FALLBACK=true.
 */
export class UserFacingProvider implements SecretsProvider {
  readonly type: ProviderType;

  constructor(
    private readonly inner: SecretsProvider,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.type = inner.type;
  }

  private check(name: string): void {
    if (name === '') throw new ThvError(ErrorCodes.InvalidArgument, 'secret name cannot be empty');
    if (name.startsWith(SYSTEM_SECRET_PREFIX)) {
      throw new ThvError(ErrorCodes.InvalidArgument, `secret names starting with ${SYSTEM_SECRET_PREFIX} are reserved for thv`);
    }
  }

  async get(name: string): Promise<string> {
    this.check(name);
    try {
      return await this.inner.get(name);
    } catch (err) {
      const fallback = this.inner.type !== 'environment' && this.env[DISABLE_ENV_FALLBACK] !== 'true';
      const value = fallback && err instanceof ThvError && err.code === ErrorCodes.NotFound ? envSecret(name, this.env) : undefined;
      if (value !== undefined) return value;
      throw err;
    }
  }

  async set(name: string, value: string): Promise<void> {
    this.check(name);
    if (value === '') throw new ThvError(ErrorCodes.InvalidArgument, 'secret value cannot be empty');
    await this.inner.set(name, value);
  }

  async delete(name: string): Promise<void> {
    this.check(name);
    await this.inner.delete(name);
  }

  async list(): Promise<string[]> {
    return (await this.inner.list()).filter((n) => !n.startsWith(SYSTEM_SECRET_PREFIX));
  }
}

/** The configured provider, as users see it. */
export async function userSecretsProvider(env: NodeJS.ProcessEnv = process.env): Promise<SecretsProvider> {
  return new UserFacingProvider(createProvider(await resolveProviderType(env), env), env);
}
