/**
 * What a remote workload's proxy needs, read from the RunConfig (`remote_url`, `remote_auth_config`,
 * `header_forward`, `token_exchange_config`) plus the secrets that are never persisted (in memory, or
 * the environment of a detached proxy).
 */
import type { InMemorySecrets } from '../config/build-run-config.js';
import type { RunConfig } from '../config/run-config.js';
import { DEFAULT_REMOTE_AUTH_CALLBACK_PORT, DEFAULT_REMOTE_AUTH_TIMEOUT_MS } from '../config/run-options.js';

export interface RemoteAuthSettings {
  clientId?: string;
  clientSecret?: string;
  clientSecretFile?: string;
  scopes: string[];
  scopeParamName?: string;
  skipBrowser: boolean;
  timeoutMs: number;
  callbackPort: number;
  issuer?: string;
  authorizeUrl?: string;
  tokenUrl?: string;
  resource?: string;
  bearerToken?: string;
  bearerTokenFile?: string;
  oauthParams?: Record<string, string>;
}

export interface RemoteSettings {
  url: string;
  auth: RemoteAuthSettings;
  /** `--remote-forward-headers`: name → value. */
  forwardHeaders: Record<string, string>;
  /** `--remote-forward-headers-secret`: name → secret name (resolved at start). */
  forwardHeadersSecret: Record<string, string>;
  /** Token exchange supplies the upstream credentials: the OAuth token is then not injected. */
  tokenExchange: boolean;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const strMap = (v: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
};

export function remoteSettingsFromRunConfig(config: RunConfig, secrets: InMemorySecrets, env: NodeJS.ProcessEnv): RemoteSettings | undefined {
  if (!config.remote_url) return undefined;
  const a = (config.remote_auth_config ?? {}) as Record<string, unknown>;
  const timeoutNs = typeof a.timeout === 'number' ? a.timeout : undefined;
  const port = typeof a.callback_port === 'number' && a.callback_port > 0 ? a.callback_port : DEFAULT_REMOTE_AUTH_CALLBACK_PORT;
  const hf = (config.header_forward ?? {}) as Record<string, unknown>;
  return {
    url: config.remote_url,
    auth: {
      clientId: str(a.client_id),
      clientSecret: secrets.remoteAuthClientSecret,
      clientSecretFile: str(a.client_secret_file),
      scopes: Array.isArray(a.scopes) ? a.scopes.filter((s): s is string => typeof s === 'string') : [],
      scopeParamName: str(a.scope_param_name),
      skipBrowser: a.skip_browser === true,
      timeoutMs: timeoutNs !== undefined && timeoutNs > 0 ? timeoutNs / 1e6 : DEFAULT_REMOTE_AUTH_TIMEOUT_MS,
      callbackPort: port,
      issuer: str(a.issuer),
      authorizeUrl: str(a.authorize_url),
      tokenUrl: str(a.token_url),
      resource: str(a.resource),
      // The bearer token: from memory, else its file, else ToolHive's variable.
      bearerToken: secrets.remoteAuthBearerToken ?? (str(a.bearer_token_file) ? undefined : str(env.TOOLHIVE_REMOTE_AUTH_BEARER_TOKEN)),
      bearerTokenFile: str(a.bearer_token_file),
      oauthParams: a.oauth_params !== undefined ? strMap(a.oauth_params) : undefined,
    },
    forwardHeaders: strMap(hf.add_plaintext_headers),
    forwardHeadersSecret: strMap(hf.add_headers_from_secret),
    tokenExchange: config.token_exchange_config !== undefined,
  };
}
