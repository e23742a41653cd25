import { ErrorCodes, ThvError } from '../errors.js';
import type { SecretsProvider } from './types.js';

/** ToolHive's environment provider: secret `X` is the variable `TOOLHIVE_SECRET_X`; read-only. */
export const ENV_SECRET_PREFIX = 'TOOLHIVE_SECRET_';

export function envSecret(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const value = env[`${ENV_SECRET_PREFIX}${name}`];
  return value === undefined || value === '' ? undefined : value;
}

export class EnvironmentProvider implements SecretsProvider {
  readonly type = 'environment' as const;

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  async get(name: string): Promise<string> {
    const value = envSecret(name, this.env);
    if (value === undefined) {
      throw new ThvError(ErrorCodes.NotFound, `secret not found: ${name}`, {
        hint: `the environment provider reads ${ENV_SECRET_PREFIX}${name}`,
      });
    }
    return value;
  }

  async set(): Promise<void> {
    throw readOnly();
  }

  async delete(): Promise<void> {
    throw readOnly();
  }

  async list(): Promise<string[]> {
    return Object.keys(this.env)
      .filter((k) => k.startsWith(ENV_SECRET_PREFIX) && k.length > ENV_SECRET_PREFIX.length && this.env[k] !== '')
      .map((k) => k.slice(ENV_SECRET_PREFIX.length))
      .sort();
  }
}

function readOnly(): ThvError {
  return new ThvError(ErrorCodes.InvalidArgument, 'the environment secrets provider is read-only', {
    hint: `set ${ENV_SECRET_PREFIX}<NAME> in the environment instead, or switch with: thv secret provider encrypted`,
  });
}

/** ToolHive's `none` provider: holds nothing. */
export class NoneProvider implements SecretsProvider {
  readonly type = 'none' as const;
  async get(name: string): Promise<string> {
    throw new ThvError(ErrorCodes.NotFound, `secret not found: ${name}`, { hint: 'the secrets provider is "none"' });
  }
  async set(): Promise<void> {
    throw new ThvError(ErrorCodes.InvalidArgument, 'the "none" secrets provider cannot store secrets', {
      hint: 'thv secret provider encrypted',
    });
  }
  async delete(name: string): Promise<void> {
    await this.get(name);
  }
  async list(): Promise<string[]> {
    return [];
  }
}
