/**
 * Local JWT verification: only the asymmetric RS256/384/512 and ES256/384/512 algorithms, `kid` required and looked up in the
 * issuer's JWKS, signature and claims checked by jose (exact `iss`, `aud` contains the audience,
 * `exp` required and in the future, `nbf` respected, no clock tolerance).
 */
import { errors as joseErrors, jwtVerify } from 'jose';
import { invalidToken, MalformedJwtError } from './errors.js';
import type { JwksCache } from './jwks.js';

export const ALLOWED_ALGORITHMS: ReadonlySet<string> = new Set(['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512']);

export interface JwtRules {
  issuer: string;
  audience?: string;
}

interface JoseHeader {
  alg?: unknown;
  kid?: unknown;
}

/**
 * Reads the protected header of a JWS compact string. Anything that is not three segments with a
 * base64url JSON object header throws MalformedJwtError (the caller may then introspect).
 */
export function decodeHeader(token: string): JoseHeader {
  const first = token.indexOf('.');
  const second = first === -1 ? -1 : token.indexOf('.', first + 1);
  if (first <= 0 || second === -1 || token.indexOf('.', second + 1) !== -1) throw new MalformedJwtError('not a JWS compact string');
  // The payload is decoded by jose; it is looked at here only when jose refuses it (see verifyJwt).
  return parseSegment(token.slice(0, first)) as JoseHeader;
}

function parseSegment(segment: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw new MalformedJwtError('token segment is not base64url JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new MalformedJwtError('token segment is not a JSON object');
  return value as Record<string, unknown>;
}

/** Verifies a JWT and returns its payload. Throws AuthError (invalid_token) or MalformedJwtError. */
export async function verifyJwt(token: string, jwks: JwksCache, rules: JwtRules): Promise<Record<string, unknown>> {
  const header = decodeHeader(token);
  const alg = header.alg;
  if (typeof alg !== 'string' || !ALLOWED_ALGORITHMS.has(alg)) throw invalidToken(`unexpected signing method: ${typeof alg === 'string' ? alg.slice(0, 20) : 'none'}`);
  const kid = header.kid;
  if (typeof kid !== 'string' || kid === '') throw invalidToken('token header missing kid');
  let key = jwks.peek(kid, alg);
  if (key === undefined) {
    try {
      key = await jwks.getKey(kid, alg);
    } catch (err) {
      throw invalidToken(`could not get signing keys: ${(err as Error).message}`);
    }
  }
  if (key === undefined) throw invalidToken('key ID not found in JWKS');
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [alg],
      issuer: rules.issuer,
      ...(rules.audience !== undefined ? { audience: rules.audience } : {}),
      requiredClaims: ['exp'],
      clockTolerance: 0,
    });
    return payload as Record<string, unknown>;
  } catch (err) {
    // A payload that is not a JSON object makes the token malformed (ToolHive: → introspection).
    if (err instanceof joseErrors.JWTInvalid && !payloadIsJsonObject(token)) throw new MalformedJwtError('token payload is not base64url JSON');
    throw invalidToken(describeJoseError(err));
  }
}

function payloadIsJsonObject(token: string): boolean {
  try {
    parseSegment(token.split('.')[1] ?? '');
    return true;
  } catch {
    return false;
  }
}

/** Stable, token-free descriptions of jose's failures. */
function describeJoseError(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'token expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    switch (err.claim) {
      case 'iss':
        return 'invalid issuer';
      case 'aud':
        return 'invalid audience';
      case 'nbf':
        return 'token not valid yet (nbf)';
      case 'exp':
        return 'token has no valid exp claim';
      default:
        return `invalid ${err.claim} claim`;
    }
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature verification failed';
  if (err instanceof joseErrors.JWTInvalid || err instanceof joseErrors.JWSInvalid) return 'malformed token';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'unexpected signing method';
  if (err instanceof joseErrors.JOSEError) return `token rejected (${err.code})`;
  return 'token rejected';
}
