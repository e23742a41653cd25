/**
 * Secrets: providers (encrypted file, environment) and the resolution of `--secret NAME,target=VAR`
 * references into server environment variables at proxy start (spec §4.10).
 */
import { ErrorCodes, ThvError } from '../errors.js';
import { EncryptedFileProvider } from './encrypted-provider.js';
import { getSecretsPassword, PASSWORD_ENV } from './password.js';
import { createProvider, resolveProviderType, UserFacingProvider, userSecretsProvider } from './provider.js';
import { encryptedSecretsPath } from './xdg.js';
import { parseSecretRef } from './secret-ref.js';
import type { SecretsProvider } from './types.js';

export { parseSecretRef, formatSecretRef, type SecretRef } from './secret-ref.js';
export { userSecretsProvider, resolveProviderType, createProvider, parseProviderType, PROVIDER_ENV } from './provider.js';
export { PASSWORD_ENV };
export { PROVIDER_TYPES, type ProviderType, type SecretsProvider } from './types.js';

/**
 * Resolves `--secret` references into `{ TARGET: value }`. All references are parsed before any value is
 * read, and every missing secret is named in one error — but no value ever appears in an error or a log.
 * Call it where the proxy starts (foreground run, and the detached proxy's `start --foreground`), and
 * merge the result over the RunConfig's `env_vars` in memory only: values must never be persisted.
 * `provider` is for callers that already hold one (tests); by default the configured provider is used.
 */
export async function resolveSecretEnv(
  refs: readonly string[],
  options: { env?: NodeJS.ProcessEnv; provider?: SecretsProvider } = {},
): Promise<Record<string, string>> {
  if (refs.length === 0) return {};
  const parsed = refs.map(parseSecretRef);
  const provider = options.provider ?? (await userSecretsProvider(options.env ?? process.env));
  const out: Record<string, string> = {};
  const missing: string[] = [];
  for (const ref of parsed) {
    try {
      out[ref.target] = await provider.get(ref.name);
    } catch (err) {
      if (err instanceof ThvError && err.code === ErrorCodes.NotFound) missing.push(ref.name);
      else throw err;
    }
  }
  if (missing.length > 0) {
    throw new ThvError(
      ErrorCodes.NotFound,
      `secret${missing.length > 1 ? 's' : ''} not found in the ${provider.type} secrets provider: ${missing.join(', ')}`,
      { hint: `create ${missing.length > 1 ? 'them' : 'it'} with: thv secret set ${missing[0]!}` },
    );
  }
  return out;
}

/**
 * For a launcher that starts the proxy in another process (detached mode, spec §1.8 step 1–2): checks now
 * that every reference resolves (fail fast, while a person can still see the error), and returns the
 * environment the child needs to resolve them again itself. For the encrypted provider that is the store
 * password (from TOOLHIVE_SECRETS_PASSWORD, or asked for here once), passed as TOOLHIVE_SECRETS_PASSWORD as
 * ToolHive does; the child strips TOOLHIVE_* variables before starting the MCP server. Nothing is returned
 * (and nothing is asked) when there are no references.
 */
export async function prepareDetachedSecrets(
  refs: readonly string[],
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<Record<string, string>> {
  if (refs.length === 0) return {};
  const env = options.env ?? process.env;
  const type = await resolveProviderType(env);
  if (type !== 'encrypted') {
    await resolveSecretEnv(refs, { provider: new UserFacingProvider(createProvider(type, env), env) });
    return {};
  }
  const path = encryptedSecretsPath(env);
  // `thv start --all` prepares several workloads at once: one prompt serves them all.
  const fromEnv = env[PASSWORD_ENV];
  let asked = fromEnv ? Promise.resolve(fromEnv) : askedPasswords.get(path);
  if (asked === undefined) {
    asked = getSecretsPassword({ env, creating: false });
    askedPasswords.set(path, asked);
  }
  try {
    const password = await asked;
    const provider = new UserFacingProvider(new EncryptedFileProvider(path, async () => password), env);
    await resolveSecretEnv(refs, { provider });
    return { [PASSWORD_ENV]: password };
  } catch (err) {
    // A wrong or refused password is not kept for the next workload.
    if (askedPasswords.get(path) === asked) askedPasswords.delete(path);
    throw err;
  }
}

/** Store path → the password typed at this process's prompt (lives as long as the short CLI command). */
const askedPasswords = new Map<string, Promise<string>>();
