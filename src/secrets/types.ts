/** The providers ToolHive knows (`secrets.provider_type`); thv implements encrypted, environment and none. */
export const PROVIDER_TYPES = ['encrypted', 'environment', '1password', 'none'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/** A store of named secrets. Values are never logged or put into errors. */
export interface SecretsProvider {
  readonly type: ProviderType;
  /** Throws ThvError NotFound naming the secret (never a value). */
  get(name: string): Promise<string>;
  set(name: string, value: string): Promise<void>;
  delete(name: string): Promise<void>;
  /** Names only, sorted. */
  list(): Promise<string[]>;
}

/** Secrets whose names start with this are managed by thv itself (spec §4.10 scopes) and hidden from users. */
export const SYSTEM_SECRET_PREFIX = '__thv_';
