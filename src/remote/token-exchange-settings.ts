/**
 * The token-exchange middleware's options from the RunConfig's `token_exchange_config`; the client
 * secret comes from memory, else its file (`thv_client_secret_file`), else TOOLHIVE_TOKEN_EXCHANGE_CLIENT_SECRET.
 */
import { readFileSync } from 'node:fs';
import type { InMemorySecrets } from '../config/build-run-config.js';
import type { RunConfig } from '../config/run-config.js';
import { ErrorCodes, ThvError } from '../errors.js';
import type { TokenExchangeOptions } from '../middleware/token-exchange.js';

export type TokenExchangeSettings = Omit<TokenExchangeOptions, 'logger'>;

export function tokenExchangeSettingsFromRunConfig(config: RunConfig, secrets: InMemorySecrets, env: NodeJS.ProcessEnv): TokenExchangeSettings | undefined {
  const t = config.token_exchange_config as Record<string, unknown> | undefined;
  if (!t || typeof t.token_url !== 'string' || t.token_url === '') return undefined;
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  let secret = secrets.tokenExchangeClientSecret ?? str(t.client_secret);
  const file = str(t.thv_client_secret_file);
  if (secret === undefined && file !== undefined) {
    try {
      secret = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new ThvError(ErrorCodes.InvalidConfig, `cannot read the token-exchange client secret file ${file}: ${(err as Error).message}`);
    }
  }
  secret ??= str(env.TOOLHIVE_TOKEN_EXCHANGE_CLIENT_SECRET);
  const strategy = str(t.header_strategy) ?? 'replace';
  if (strategy !== 'replace' && strategy !== 'custom') throw new ThvError(ErrorCodes.InvalidConfig, `invalid token exchange header_strategy ${JSON.stringify(strategy)}`);
  const headerName = str(t.external_token_header_name);
  if (strategy === 'custom' && !headerName) throw new ThvError(ErrorCodes.InvalidConfig, 'token exchange header_strategy "custom" needs external_token_header_name');
  return {
    tokenUrl: t.token_url,
    clientId: str(t.client_id),
    clientSecret: secret,
    audience: str(t.audience),
    scopes: Array.isArray(t.scopes) ? t.scopes.filter((s): s is string => typeof s === 'string') : [],
    subjectTokenType: str(t.subject_token_type),
    headerName: strategy === 'custom' ? headerName : undefined,
  };
}
