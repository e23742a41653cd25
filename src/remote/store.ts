/**
 * Keeps a remote login between runs (spec §7.2 steps 4 and 6): the refresh token and the dynamically
 * registered client, as one thv-owned secret per workload in the encrypted secrets store. ToolHive keeps
 * `OAUTH_REFRESH_TOKEN_<name>` plus references in the RunConfig; we keep one secret and no references, so
 * the RunConfig never changes behind the user's back. Failures to read or write only cost a new login.
 */
import type { Logger } from '../logging.js';
import { SYSTEM_SECRET_PREFIX } from '../secrets/types.js';
import type { RegisteredClient } from './registration.js';

export interface LoginStore {
  get(name: string): Promise<string>;
  set(name: string, value: string): Promise<void>;
  delete(name: string): Promise<void>;
}

export interface CachedLogin {
  issuer: string;
  client?: RegisteredClient;
  refreshToken: string;
}

export function loginSecretName(workload: string): string {
  return `${SYSTEM_SECRET_PREFIX}workloads_OAUTH_LOGIN_${workload}`;
}

export async function loadCachedLogin(store: LoginStore, workload: string, logger: Logger): Promise<CachedLogin | undefined> {
  let raw: string;
  try {
    raw = await store.get(loginSecretName(workload));
  } catch {
    return undefined;
  }
  try {
    const doc = JSON.parse(raw) as CachedLogin;
    if (typeof doc.issuer === 'string' && typeof doc.refreshToken === 'string' && doc.refreshToken !== '') return doc;
  } catch {
    // fall through
  }
  logger.warn('the stored login for the remote is unreadable; ignoring it');
  return undefined;
}

export async function saveCachedLogin(store: LoginStore, workload: string, login: CachedLogin, logger: Logger): Promise<void> {
  try {
    await store.set(loginSecretName(workload), JSON.stringify(login));
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'could not store the remote login in the secrets store; the next start will ask again');
  }
}

/** The encrypted secrets store when one is set up (the only kind that can hold a written secret), else undefined. */
export async function defaultLoginStore(env: NodeJS.ProcessEnv, logger: Logger): Promise<LoginStore | undefined> {
  try {
    const { resolveProviderType, createProvider } = await import('../secrets/provider.js');
    const type = await resolveProviderType(env);
    if (type !== 'encrypted') return undefined;
    return createProvider(type, env);
  } catch (err) {
    logger.debug({ err: (err as Error).message }, 'no secrets store for the remote login; it will not survive a restart');
    return undefined;
  }
}
