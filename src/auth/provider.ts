/**
 * One identity provider: discovery of its JWKS, local JWT verification, and RFC 7662 introspection for
 * tokens that are not JWTs. Configuration problems are found at construction (startup), not per request.
 */
import { readFileSync } from 'node:fs';
import { ErrorCodes, ThvError } from '../errors.js';
import type { Logger } from '../logging.js';
import { checkClaims, identityFromClaims } from './claims.js';
import { AuthError, invalidToken, MalformedJwtError } from './errors.js';
import type { Identity } from './identity.js';
import { JwksCache, maxAgeMs, type FetchedJwks } from './jwks.js';
import { verifyJwt } from './jwt.js';
import { createOutboundClient, type OutboundClient } from './outbound.js';

export interface AuthProviderConfig {
  /** Used in logs and error messages; defaults to the issuer. */
  name?: string;
  issuer: string;
  audience?: string;
  /** Skips discovery when set. */
  jwksUrl?: string;
  introspectionUrl?: string;
  clientId?: string;
  clientSecret?: string;
  clientSecretFile?: string;
  /** PEM file path; replaces the system roots for discovery, JWKS and introspection. */
  caBundle?: string;
  /** File holding a bearer token sent to discovery, JWKS (and introspection when no client credentials). */
  authTokenFile?: string;
  allowPrivateIp?: boolean;
  insecureAllowHttp?: boolean;
}

export interface ProviderValidation {
  identity: Identity;
  /** Until when the result may be reused, in ms since the epoch. */
  cacheUntil: number;
}

const DISCOVERY_MAX_BYTES = 256 * 1024;
const JWKS_MAX_BYTES = 512 * 1024;
const INTROSPECTION_MAX_BYTES = 64 * 1024;
/** Introspection answers are reused at most this long, so a revoked opaque token stops working soon. */
const INTROSPECTION_CACHE_MS = 30_000;
const USER_AGENT = 'thv/1.0';

export interface ProviderOptions {
  logger?: Logger;
  jwksMinRefreshMs?: number;
  timeoutMs?: number;
}

export class OidcProvider {
  readonly name: string;
  private readonly issuer: string;
  private readonly audience: string | undefined;
  private readonly http: OutboundClient;
  private readonly jwks: JwksCache;
  /** Reads the bearer token for identity-provider requests (re-read each time: orchestrators rotate it). */
  private readonly bearer: (() => string) | undefined;
  private readonly basicAuth: string | undefined;
  private readonly introspectionUrl: string | undefined;
  private jwksUrl: string | undefined;
  private discovering: Promise<string> | undefined;

  constructor(config: AuthProviderConfig, private readonly options: ProviderOptions = {}) {
    this.name = config.name || config.issuer || 'oidc';
    const where = `auth provider ${JSON.stringify(this.name)}`;
    if (!config.issuer) {
      throw new ThvError(ErrorCodes.InvalidConfig, `${where}: an issuer is required`, { hint: 'give the token issuer with --oidc-issuer (or issuerUrl)' });
    }
    const allowHttp = config.insecureAllowHttp === true;
    for (const [field, value] of [['issuer', config.issuer], ['JWKS URL', config.jwksUrl], ['introspection URL', config.introspectionUrl]] as const) {
      if (value === undefined || value === '') continue;
      let u: URL;
      try {
        u = new URL(value);
      } catch {
        throw new ThvError(ErrorCodes.InvalidConfig, `${where}: the ${field} is not a valid URL`);
      }
      if (u.protocol !== 'https:' && !(allowHttp && u.protocol === 'http:')) {
        throw new ThvError(ErrorCodes.InvalidConfig, `${where}: the ${field} must use https`, { hint: 'for local testing only: --oidc-insecure-allow-http' });
      }
    }
    this.issuer = config.issuer;
    this.audience = config.audience || undefined;
    this.jwksUrl = config.jwksUrl || undefined;
    this.introspectionUrl = config.introspectionUrl || undefined;
    if (config.authTokenFile) {
      const file = config.authTokenFile;
      let last = readTokenFile(file, where); // a missing or empty file is a startup error
      this.bearer = () => {
        try {
          last = readTokenFile(file, where);
        } catch {
          // Mid-rotation the file may be briefly missing or empty: keep using the last good token.
        }
        return last;
      };
    }
    const secret = config.clientSecret || (config.clientSecretFile ? readSecretFile(config.clientSecretFile, where) : undefined);
    if (config.clientId && secret) {
      // RFC 6749 §2.3.1: both parts form-encoded before base64.
      this.basicAuth = `Basic ${Buffer.from(`${formEncode(config.clientId)}:${formEncode(secret)}`).toString('base64')}`;
    }
    if (config.caBundle) {
      try {
        readFileSync(config.caBundle);
      } catch (err) {
        throw new ThvError(ErrorCodes.InvalidConfig, `${where}: cannot read the CA bundle ${config.caBundle}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
      }
    }
    this.http = createOutboundClient({
      caBundle: config.caBundle,
      allowPrivateIp: config.allowPrivateIp === true,
      allowHttp,
      timeoutMs: options.timeoutMs,
    });
    this.jwks = new JwksCache(() => this.fetchJwks(), { minRefreshMs: options.jwksMinRefreshMs });
  }

  /** Validates a bearer token. Throws AuthError. */
  async validate(token: string): Promise<ProviderValidation> {
    let claims: Record<string, unknown>;
    let cacheUntil: number;
    try {
      claims = await verifyJwt(token, this.jwks, { issuer: this.issuer, audience: this.audience });
      const now = Date.now();
      cacheUntil = checkClaims(claims, { issuer: this.issuer, audience: this.audience }, now);
    } catch (err) {
      if (!(err instanceof MalformedJwtError)) throw err;
      if (this.introspectionUrl === undefined) throw invalidToken('token is not a JWT and no introspection endpoint is configured');
      claims = await this.introspect(token);
      const now = Date.now();
      cacheUntil = Math.min(checkClaims(claims, { issuer: this.issuer, audience: this.audience, issuerOptional: true }, now), now + INTROSPECTION_CACHE_MS);
    }
    return { identity: identityFromClaims(claims, token), cacheUntil };
  }

  async close(): Promise<void> {
    await this.http.close();
  }

  private headers(accept = 'application/json'): Record<string, string> {
    const h: Record<string, string> = { accept, 'user-agent': USER_AGENT };
    if (this.bearer !== undefined) h.authorization = `Bearer ${this.bearer()}`;
    return h;
  }

  private async fetchJwks(): Promise<FetchedJwks> {
    const url = this.jwksUrl ?? (await this.discover());
    const res = await this.http.request(url, { headers: this.headers(), maxBytes: JWKS_MAX_BYTES });
    if (res.status !== 200) throw new Error(`JWKS request failed with status ${res.status}`);
    const doc = parseJson(res.body, 'JWKS');
    if (!Array.isArray(doc.keys)) throw new Error('JWKS has no keys array');
    return { keys: doc.keys, maxAgeMs: maxAgeMs(res.headers.get('cache-control')) };
  }

  /** `jwks_uri` from the issuer's discovery document; a failure is not remembered (the next token retries). */
  private discover(): Promise<string> {
    this.discovering ??= (async () => {
      const url = `${this.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
      let lastError: unknown;
      for (let attempt = 0; attempt < 3; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, 200 * 2 ** (attempt - 1)));
        try {
          const res = await this.http.request(url, { headers: this.headers(), maxBytes: DISCOVERY_MAX_BYTES });
          if (res.status >= 500) throw new Error(`OIDC discovery failed with status ${res.status}`);
          if (res.status !== 200) throw new PermanentError(`OIDC discovery failed with status ${res.status}`);
          const doc = parseJson(res.body, 'discovery document');
          if (typeof doc.jwks_uri !== 'string' || doc.jwks_uri === '') throw new PermanentError('discovery document has no jwks_uri');
          this.jwksUrl = doc.jwks_uri;
          return doc.jwks_uri;
        } catch (err) {
          lastError = err;
          // Policy refusals (HTTPS, private address) and bad documents will not change on retry.
          if (err instanceof PermanentError || (err as Error).name === 'OutboundError' && /not allowed|HTTPS is required/.test((err as Error).message)) break;
        }
      }
      throw new Error(`OIDC discovery failed: ${(lastError as Error).message}`);
    })().finally(() => {
      this.discovering = undefined;
    });
    return this.discovering;
  }

  private async introspect(token: string): Promise<Record<string, unknown>> {
    const headers = this.headers();
    headers['content-type'] = 'application/x-www-form-urlencoded';
    if (this.basicAuth !== undefined) headers.authorization = this.basicAuth;
    let res;
    try {
      res = await this.http.request(this.introspectionUrl!, {
        method: 'POST',
        headers,
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
        maxBytes: INTROSPECTION_MAX_BYTES,
      });
    } catch (err) {
      throw invalidToken(`introspection failed: ${(err as Error).message}`);
    }
    if (res.status === 401) throw invalidToken('introspection unauthorized');
    if (res.status !== 200) throw invalidToken(`introspection failed with status ${res.status}`);
    let doc: Record<string, unknown>;
    try {
      doc = parseJson(res.body, 'introspection response');
    } catch (err) {
      throw invalidToken((err as Error).message);
    }
    if (doc.active !== true) throw invalidToken('token is not active');
    // Every claim is kept (the reference drops all but six), so policies work with opaque tokens too.
    return doc;
  }
}

class PermanentError extends Error {}

function parseJson(body: Buffer, what: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    throw new PermanentError(`${what} is not valid JSON`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new PermanentError(`${what} is not a JSON object`);
  return doc as Record<string, unknown>;
}

function formEncode(s: string): string {
  return encodeURIComponent(s).replace(/%20/g, '+');
}

function readTokenFile(path: string, where: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ThvError(ErrorCodes.InvalidConfig, `${where}: cannot read the auth token file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const token = text.trim();
  if (token === '') throw new ThvError(ErrorCodes.InvalidConfig, `${where}: the auth token file ${path} is empty`);
  return token;
}

function readSecretFile(path: string, where: string): string {
  try {
    const secret = readFileSync(path, 'utf8').trim();
    if (secret === '') throw new ThvError(ErrorCodes.InvalidConfig, `${where}: the client secret file ${path} is empty`);
    return secret;
  } catch (err) {
    if (err instanceof ThvError) throw err;
    throw new ThvError(ErrorCodes.InvalidConfig, `${where}: cannot read the client secret file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

export { AuthError };
