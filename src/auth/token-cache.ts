import * as crypto from 'node:crypto';
import type { Identity } from './identity.js';

/** crypto.hash (Node ≥ 20.12) hashes without creating a Hash object: about twice as fast for a token. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64') => string }).hash;

/**
 * Identities of verified tokens, until their `exp`. Keyed by a SHA-256 of the `Bearer <token>` header value so the token itself
 * is not held as a key; bounded (the oldest entry goes first when full).
 */
export class TokenCache {
  private readonly entries = new Map<string, { identity: Identity; until: number }>();

  constructor(private readonly max: number) {}

  static key(token: string): string {
    return oneShotHash !== undefined ? oneShotHash('sha256', token, 'base64') : crypto.createHash('sha256').update(token).digest('base64');
  }

  get(key: string, now: number): Identity | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.until <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return e.identity;
  }

  set(key: string, identity: Identity, until: number): void {
    if (this.max <= 0) return;
    if (this.entries.size >= this.max && !this.entries.has(key)) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { identity, until });
  }

  get size(): number {
    return this.entries.size;
  }
}
