import { AuthError } from './errors.js';

/**
 * Longest bearer token accepted (group-heavy enterprise tokens reach 6–8 KB; Node refuses header blocks
 * over 16 KB anyway); a larger one is refused before any decoding and any network call.
 */
export const MAX_TOKEN_LENGTH = 12 * 1024;

/**
 * RFC 6750 §2.1 b64token: the only characters a bearer credential may hold. This also rules out
 * quoting, inner whitespace and control characters.
 */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * The token of `Authorization: Bearer <token>`, written exactly so: one header, the case-sensitive
 * scheme `Bearer`, one space, a b64token, nothing else (stricter than ToolHive, which keeps inner
 * spaces). Everything else is `invalid_request`, as RFC 6750 §3.1 asks for a malformed request.
 */
export function extractBearerToken(authorization: string | string[] | undefined): string {
  const token = bearerCandidate(authorization);
  checkTokenSyntax(token);
  return token;
}

/**
 * The part of extractBearerToken that is cheap whatever the token's length: one header, the scheme,
 * non-empty, not too long. The authenticator looks the candidate up in its cache of verified tokens
 * before paying for checkTokenSyntax (a cached token passed it already, and a different string cannot
 * hash to the same key).
 */
export function bearerCandidate(authorization: string | string[] | undefined): string {
  if (Array.isArray(authorization)) {
    if (authorization.length > 1) throw new AuthError('invalid_request', 'more than one Authorization header');
    authorization = authorization[0];
  }
  if (authorization === undefined || authorization === '') {
    throw new AuthError('invalid_request', 'authorization header required');
  }
  if (!authorization.startsWith('Bearer ')) {
    throw new AuthError('invalid_request', "invalid authorization header format, expected 'Bearer <token>'");
  }
  const token = authorization.slice(7);
  if (token.trim() === '') throw new AuthError('invalid_request', 'empty token in authorization header');
  if (token.length > MAX_TOKEN_LENGTH) throw new AuthError('invalid_request', `token longer than ${MAX_TOKEN_LENGTH} characters`);
  return token;
}

/** The token must be an RFC 6750 b64token: no whitespace, quoting or other characters. */
export function checkTokenSyntax(token: string): void {
  if (!B64TOKEN.test(token)) {
    throw new AuthError('invalid_request', "invalid authorization header format, expected 'Bearer <token>' with no extra whitespace or quoting");
  }
}
