/**
 * Why a request was not authenticated. `code` is the OAuth error code of RFC 6750 §3.1 and is stable;
 * `description` is safe to show the caller and to log: it never contains the token or a secret.
 */
export type AuthErrorCode = 'invalid_request' | 'invalid_token';

export class AuthError extends Error {
  readonly code: AuthErrorCode;
  readonly description: string;
  readonly status = 401 as const;

  constructor(code: AuthErrorCode, description: string) {
    super(description);
    this.name = 'AuthError';
    this.code = code;
    this.description = description;
  }
}

/** A token that failed validation. */
export function invalidToken(description: string): AuthError {
  return new AuthError('invalid_token', description);
}

/**
 * Thrown inside a provider when the token is not a JWS compact string at all, so the provider may try
 * introspection instead (ToolHive's ErrTokenMalformed path).
 */
export class MalformedJwtError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'MalformedJwtError';
  }
}
