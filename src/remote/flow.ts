/**
 * The interactive OAuth 2.0 authorization-code flow with PKCE S256 (spec §7.2 step 5): registration when
 * no client is configured, a local callback server, the browser (or a printed URL), and the code
 * exchanged at the token endpoint — all bounded by `--remote-auth-timeout`.
 */
import { spawn } from 'node:child_process';
import * as oidc from 'openid-client';
import { ErrorCodes, ThvError } from '../errors.js';
import type { Logger } from '../logging.js';
import { freePort } from '../proxy/net.js';
import { CallbackError, startCallbackServer } from './callback-server.js';
import type { AuthServerMetadata } from './discovery.js';
import { clientConfiguration, describeOAuthError, type ClientIdentity } from './oauth-client.js';
import { redirectUriFor, registerClient, type RegisteredClient } from './registration.js';

export interface FlowOptions {
  metadata: AuthServerMetadata;
  scopes: string[];
  /** Configured client; when absent the client is registered dynamically. */
  client?: ClientIdentity;
  /** A client registered earlier (restart): reused with its redirect port. */
  registered?: RegisteredClient;
  callbackPort: number;
  skipBrowser: boolean;
  timeoutMs: number;
  resource?: string;
  scopeParamName?: string;
  /** Extra authorization-request parameters (registry `oauth_params`). */
  extraParams?: Record<string, string>;
  logger: Logger;
  /** Where the user-facing lines go (stderr). */
  say?: (line: string) => void;
}

export interface FlowResult {
  config: oidc.Configuration;
  tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;
  registered?: RegisteredClient;
}

async function portIsFree(port: number): Promise<boolean> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * The client id thv uses where the authorization server accepts client ID metadata documents: the one
 * ToolHive publishes, as the reference does (its redirect URIs are ToolHive's callback).
 */
export const CLIENT_METADATA_DOCUMENT_URL = 'https://toolhive.dev/oauth/client-metadata.json';

export async function runAuthorizationCodeFlow(o: FlowOptions): Promise<FlowResult> {
  const deadline = Date.now() + o.timeoutMs;
  let registered = o.registered;
  let port = registered ? Number(new URL(registered.redirect_uri).port) : o.callbackPort;
  let client = o.client;
  if (!client && !registered && o.metadata.client_id_metadata_document_supported === true) {
    const cimd: RegisteredClient = { client_id: CLIENT_METADATA_DOCUMENT_URL, token_endpoint_auth_method: 'none', redirect_uri: redirectUriFor(port) };
    try {
      return { ...(await authorize(o, { clientId: cimd.client_id, authMethod: 'none' }, port, deadline)), registered: cimd };
    } catch (err) {
      // The reference's fallback: a server that will not take the document gets a registered client.
      if (!/\b(invalid_client|unauthorized_client)\b/.test((err as Error).message)) throw err;
      o.logger.info('the authorization server refused the client ID metadata document; registering a client');
    }
  }
  if (!client && !registered) {
    // A busy default port is replaced by a free one: the registration names whatever port we use.
    if (!(await portIsFree(port))) {
      const fresh = await freePort('127.0.0.1');
      o.logger.info({ port, fresh }, 'callback port busy; using another one for the registered client');
      port = fresh;
    }
    registered = await registerClient(o.metadata, o.scopes, port);
    o.logger.info({ client_id: registered.client_id }, 'registered an OAuth client dynamically');
  }
  if (!client) client = { clientId: registered!.client_id, clientSecret: registered!.client_secret, authMethod: registered!.token_endpoint_auth_method };
  return { ...(await authorize(o, client, port, deadline)), registered };
}

/** One authorization of a known client: the URL, the callback, the code exchanged for tokens. */
async function authorize(o: FlowOptions, client: ClientIdentity, port: number, deadline: number): Promise<Omit<FlowResult, 'registered'>> {
  const say = o.say ?? ((line: string) => process.stderr.write(`${line}\n`));
  const config = clientConfiguration(o.metadata, client);

  const verifier = oidc.randomPKCECodeVerifier();
  const challenge = await oidc.calculatePKCECodeChallenge(verifier);
  const state = oidc.randomState();
  const params: Record<string, string> = {
    redirect_uri: redirectUriFor(port),
    ...(o.scopes.length > 0 ? { [o.scopeParamName ?? 'scope']: o.scopes.join(' ') } : {}),
    state,
    ...(o.resource ? { resource: o.resource } : {}),
    ...(o.extraParams ?? {}),
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
  const authUrl = oidc.buildAuthorizationUrl(config, params);

  let callback;
  try {
    callback = await startCallbackServer(port, state);
  } catch (err) {
    throw new ThvError(ErrorCodes.AddressInUse, `cannot listen for the OAuth callback on 127.0.0.1:${port}: ${(err as Error).message}`, {
      hint: 'choose another port with --remote-auth-callback-port',
    });
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    if (o.skipBrowser) say(`Please open this URL in your browser: ${authUrl.href}`);
    else {
      say(`Opening browser: ${authUrl.href}`);
      openBrowser(authUrl.href, o.logger);
    }
    say('Waiting for OAuth callback...');
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new ThvError(ErrorCodes.RemoteAuthFailed, `OAuth flow timed out after ${formatDuration(o.timeoutMs)} - user did not complete authentication`, {
          hint: 'complete the login in the browser sooner, or raise --remote-auth-timeout',
        })),
        Math.max(1, deadline - Date.now()),
      );
    });
    let url: URL;
    try {
      url = await Promise.race([callback.result, timeout]);
    } catch (err) {
      if (err instanceof CallbackError) throw new ThvError(ErrorCodes.RemoteAuthFailed, `OAuth authorization failed: ${err.message}`);
      throw err;
    }
    try {
      const tokens = await Promise.race([
        oidc.authorizationCodeGrant(config, url, { pkceCodeVerifier: verifier, expectedState: state }, o.resource ? { resource: o.resource } : undefined),
        timeout,
      ]);
      return { config, tokens };
    } catch (err) {
      if (err instanceof ThvError) throw err;
      throw new ThvError(ErrorCodes.RemoteAuthFailed, `exchanging the authorization code failed: ${describeOAuthError(err)}`);
    }
  } finally {
    clearTimeout(timer);
    await callback.close();
  }
}

function formatDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** Best effort: the platform's opener, detached; a failure only leaves the printed URL. */
function openBrowser(url: string, logger: Logger): void {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'cmd' : 'xdg-open';
  const args = process.platform === 'win32' ? ['/c', 'start', '', url] : [url];
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
    child.on('error', (err) => logger.warn({ err: err.message }, 'could not open a browser; open the URL above yourself'));
    child.unref();
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'could not open a browser; open the URL above yourself');
  }
}
