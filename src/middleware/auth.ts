/**
 * The proxy's `auth` stage and its RFC 9728 metadata endpoint.
 *
 * With OIDC configured: every request must carry exactly one `Authorization: Bearer <token>` that a
 * provider accepts, else 401 with a JSON body `{"error","error_description"}` and
 * `WWW-Authenticate: Bearer realm, resource_metadata, scope, error, error_description` (ToolHive's
 * format, spec §1.7). Without OIDC: every request runs as the local OS user (ToolHive's local-user
 * identity), with a warning at startup.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  AuthError,
  createAuthenticator,
  localUserIdentity,
  PROTECTED_RESOURCE_METADATA_PATH,
  protectedResourceMetadata,
  resourceMetadataUrl,
  wwwAuthenticateHeader,
  type Authenticator,
  type AuthProviderConfig,
} from '../auth/index.js';
import type { OidcConfigJson } from '../config/run-config.js';
import type { Logger } from '../logging.js';
import { sendRawJson } from '../transport/http-util.js';
import type { NamedMiddleware } from './types.js';

export const AUTH_STAGE = 'auth';

export interface ProxyAuthSettings {
  /** Tried in order; empty means no inbound authentication (local user). */
  providers: AuthProviderConfig[];
  /** RFC 9728 `resource` (`--resource-url`); defaults to the proxy's own MCP URL. */
  resourceUrl?: string;
  /** `--oidc-scopes`: WWW-Authenticate `scope` and metadata `scopes_supported`. */
  scopes?: string[];
  /** WWW-Authenticate realm; defaults to the first provider's issuer. */
  realm?: string;
  resourceDocumentation?: string;
}

export interface ProxyAuth {
  stage: NamedMiddleware;
  /** For ProxyServer's `wellKnown` option; undefined without OIDC (every `/.well-known` path is 404). */
  wellKnown: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  close(): Promise<void>;
}

export const LOCAL_USER_WARNING =
  'no OIDC issuer configured: the proxy accepts every request as the local user; use --oidc-issuer and --oidc-audience to require tokens';

/** The provider of a RunConfig's `oidc_config` (ToolHive's PascalCase block), or undefined when absent. */
export function authSettingsFromOidcConfig(
  oidc: OidcConfigJson | undefined,
  clientSecret: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ProxyAuthSettings | undefined {
  if (oidc === undefined) return undefined;
  const opt = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim());
  const secret = clientSecret || env.THV_OIDC_CLIENT_SECRET || env.TOOLHIVE_OIDC_CLIENT_SECRET || undefined;
  const provider: AuthProviderConfig = {
    issuer: opt(oidc.Issuer) ?? '',
    audience: opt(oidc.Audience),
    jwksUrl: opt(oidc.JWKSURL),
    introspectionUrl: opt(oidc.IntrospectionURL),
    clientId: opt(oidc.ClientID),
    clientSecret: secret,
    caBundle: opt(oidc.CACertPath),
    authTokenFile: opt(oidc.AuthTokenFile),
    allowPrivateIp: oidc.AllowPrivateIP === true,
    insecureAllowHttp: oidc.InsecureAllowHTTP === true || env.INSECURE_DISABLE_URL_VALIDATION?.toLowerCase() === 'true',
  };
  return {
    providers: [provider],
    resourceUrl: opt(oidc.ResourceURL),
    scopes: oidc.Scopes && oidc.Scopes.length > 0 ? oidc.Scopes : undefined,
  };
}

/**
 * Builds the auth stage. `defaultResourceUrl` (the proxy's own MCP URL) stands in for `--resource-url`
 * so that a 401 always links to metadata a client can fetch.
 */
export function proxyAuth(settings: ProxyAuthSettings | undefined, logger: Logger, defaultResourceUrl?: string): ProxyAuth {
  if (settings === undefined || settings.providers.length === 0) {
    logger.warn(LOCAL_USER_WARNING);
    const identity = localUserIdentity();
    return {
      stage: {
        name: AUTH_STAGE,
        handle: (ctx, next) => {
          ctx.identity = identity;
          return next();
        },
      },
      wellKnown: undefined,
      close: async () => {},
    };
  }

  const authenticator: Authenticator = createAuthenticator(settings.providers, { logger });
  logger.info(
    { issuers: settings.providers.map((p) => p.issuer), audience: settings.providers.map((p) => p.audience ?? null) },
    'inbound authentication: bearer tokens required',
  );
  const resource = settings.resourceUrl ?? defaultResourceUrl;
  const realm = settings.realm ?? settings.providers[0]!.issuer;
  const scope = settings.scopes?.join(' ');
  const metadataUrl = resource !== undefined ? resourceMetadataUrl(resource) : undefined;

  const reject = (res: ServerResponse, err: AuthError): void => {
    // ToolHive's body: an invalid token's description is prefixed so clients see what kind of failure it was.
    const bodyDescription = err.code === 'invalid_token' ? `Invalid token: ${err.description}` : err.description;
    sendRawJson(res, 401, JSON.stringify({ error: err.code, error_description: bodyDescription }), {
      'WWW-Authenticate': wwwAuthenticateHeader({ realm, resourceMetadataUrl: metadataUrl, scope, error: err.code, errorDescription: err.description }),
    });
  };

  const metadataJson =
    JSON.stringify(
      protectedResourceMetadata({
        resource: resource ?? '',
        authorizationServers: settings.providers.map((p) => p.issuer),
        scopes: settings.scopes ?? ['openid'],
        resourceDocumentation: settings.resourceDocumentation,
      }),
    ) + '\n';

  return {
    stage: {
      name: AUTH_STAGE,
      async handle(ctx, next) {
        let identity;
        try {
          identity = await authenticator.authenticate(authorizationValues(ctx.req));
        } catch (err) {
          if (err instanceof AuthError) return reject(ctx.res, err);
          throw err;
        }
        ctx.identity = identity;
        return next();
      },
    },
    wellKnown(req, res) {
      const path = (req.url ?? '/').split('?')[0]!;
      if (path !== PROTECTED_RESOURCE_METADATA_PATH && !path.startsWith(`${PROTECTED_RESOURCE_METADATA_PATH}/`)) return false;
      // Public and readable from browser-based clients (MCP authorization discovery).
      const origin = req.headers.origin;
      const cors: Record<string, string> = {
        'Access-Control-Allow-Origin': typeof origin === 'string' && origin !== '' ? origin : '*',
        'Access-Control-Allow-Methods': 'GET, OPTIONS',
        'Access-Control-Allow-Headers': 'mcp-protocol-version, Content-Type, Authorization',
        'Access-Control-Max-Age': '86400',
        Vary: 'Origin',
      };
      // Like ToolHive: OPTIONS is the preflight, every other method gets the document.
      if (req.method === 'OPTIONS') {
        res.writeHead(204, cors);
        res.end();
        return true;
      }
      sendRawJson(res, 200, metadataJson, cors);
      return true;
    },
    close: () => authenticator.close(),
  };
}

/**
 * The Authorization header line(s). Node keeps only the first of repeated Authorization headers in
 * `req.headers`, so the raw list is consulted to see a second one.
 */
function authorizationValues(req: IncomingMessage): string | string[] | undefined {
  const raw = req.rawHeaders;
  let found: string | undefined;
  let all: string[] | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 13 || name.toLowerCase() !== 'authorization') continue;
    if (found === undefined) found = raw[i + 1]!;
    else (all ??= [found]).push(raw[i + 1]!);
  }
  return all ?? found;
}
