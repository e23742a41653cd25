import { userInfo } from 'node:os';

/** Who is calling. Filled by the auth stage; "local user" when no OIDC is configured. */
export interface Identity {
  subject: string;
  name?: string;
  email?: string;
  /**
   * Every claim of the token (or of the introspection response). Read-only: the object is shared by all
   * requests carrying the same token (it is frozen; nested values must not be changed either).
   */
  claims: Record<string, unknown>;
  /** The raw bearer token, kept only in memory for token exchange; never logged. */
  token?: string;
}

/** The OS user name, or "local" when it cannot be read (ToolHive's fallback). */
export function localUsername(): string {
  try {
    return userInfo().username || 'local';
  } catch {
    return 'local';
  }
}

/**
 * ToolHive's local-user identity (`pkg/auth/local.go`), used when no OIDC provider is configured.
 * exp/iat/nbf are whole seconds like the Go int64 values.
 */
export function localUserIdentity(username: string = localUsername(), now: number = Date.now()): Identity {
  const t = Math.floor(now / 1000);
  const name = `Local User: ${username}`;
  const email = `${username}@localhost`;
  return {
    subject: username,
    name,
    email,
    claims: { sub: username, iss: 'toolhive-local', aud: 'toolhive', exp: t + 24 * 3600, iat: t, nbf: t, email, name },
  };
}
