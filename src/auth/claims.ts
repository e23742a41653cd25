import type { Identity } from './identity.js';
import { invalidToken } from './errors.js';

/** What the claims of a verified token (or an introspection response) must satisfy beyond the signature. */
export interface ClaimRules {
  issuer: string;
  audience?: string;
  /** Introspection responses may leave `iss` out: the endpoint vouches for the token. */
  issuerOptional?: boolean;
}

/** Checks iss / aud / exp / nbf / sub (exp is mandatory, no clock skew) and returns the expiry in ms. */
export function checkClaims(claims: Record<string, unknown>, rules: ClaimRules, nowMs: number): number {
  const iss = claims.iss;
  if (!(rules.issuerOptional && iss === undefined) && iss !== rules.issuer) throw invalidToken('invalid issuer');
  if (rules.audience !== undefined) {
    const aud = claims.aud;
    const ok = typeof aud === 'string' ? aud === rules.audience : Array.isArray(aud) && aud.includes(rules.audience);
    if (!ok) throw invalidToken('invalid audience');
  }
  const exp = claims.exp;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw invalidToken('token has no valid exp claim');
  const nowSec = nowMs / 1000;
  if (exp <= nowSec) throw invalidToken('token expired');
  const nbf = claims.nbf;
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > nowSec)) throw invalidToken('token not valid yet (nbf)');
  return exp * 1000;
}

/** The identity of verified claims; `sub` must be a non-empty string (OIDC Core 1.0 §5.1). */
export function identityFromClaims(claims: Record<string, unknown>, token: string): Identity {
  const sub = claims.sub;
  if (typeof sub !== 'string' || sub === '') throw invalidToken("missing or invalid 'sub' claim (required by OIDC Core 1.0 § 5.1)");
  const identity: Identity = { subject: sub, claims, token };
  if (typeof claims.name === 'string') identity.name = claims.name;
  if (typeof claims.email === 'string') identity.email = claims.email;
  return identity;
}
