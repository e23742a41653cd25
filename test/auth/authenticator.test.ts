/**
 * The authenticator against a real OpenID provider (oidc-provider over TLS with a test CA): discovery,
 * JWT access tokens (RS256, ES256), opaque tokens through introspection, the token cache, several
 * providers, and the identity that comes out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthError, createAuthenticator, type AuthProviderConfig, type Authenticator } from '../../src/auth/index.js';
import { JwksCache } from '../../src/auth/jwks.js';
import { startTestIdp, type TestIdp } from '../helpers/oidc-provider.js';

let idp: TestIdp;
let other: TestIdp;
let dir: string;

before(async () => {
  idp = await startTestIdp();
  other = await startTestIdp({ audience: 'https://other.thv.test', ca: idp.ca });
  dir = mkdtempSync(join(tmpdir(), 'thv-auth-test-'));
});
after(async () => {
  await other.close();
  await idp.close();
  rmSync(dir, { recursive: true, force: true });
});

function providerFor(p: TestIdp, extra: Partial<AuthProviderConfig> = {}): AuthProviderConfig {
  return { name: 'test', issuer: p.issuer, audience: p.audience, caBundle: p.caFile, allowPrivateIp: true, ...extra };
}

async function rejection(a: Authenticator, header: string | string[] | undefined): Promise<AuthError> {
  try {
    await a.authenticate(header);
  } catch (err) {
    assert.ok(err instanceof AuthError, `expected AuthError, got ${String(err)}`);
    return err;
  }
  assert.fail('the token was accepted');
}

describe('authenticator against oidc-provider', () => {
  it('discovers the JWKS and accepts RS256 and ES256 JWT access tokens', async (t) => {
    const a = createAuthenticator([providerFor(idp)]);
    t.after(() => a.close());
    const before = idp.hits.get('/.well-known/openid-configuration') ?? 0;
    const token = await idp.jwt('alice');
    const id = await a.authenticate(`Bearer ${token}`);
    assert.equal(id.subject, 'alice');
    assert.equal(id.name, 'Alice Example');
    assert.equal(id.email, 'alice@example.test');
    assert.deepEqual(id.claims.groups, ['eng']);
    assert.equal(id.claims.aud, idp.audience);
    assert.equal(id.token, token);
    assert.equal((idp.hits.get('/.well-known/openid-configuration') ?? 0) - before, 1);
    const es = await a.authenticate(`Bearer ${await idp.jwt('bob', { alg: 'ES256' })}`);
    assert.equal(es.subject, 'bob');
  });

  it('uses a configured JWKS URL without discovery', async (t) => {
    const a = createAuthenticator([providerFor(idp, { jwksUrl: idp.jwksUrl })]);
    t.after(() => a.close());
    const before = idp.hits.get('/.well-known/openid-configuration') ?? 0;
    assert.equal((await a.authenticate(`Bearer ${await idp.jwt('bob')}`)).subject, 'bob');
    assert.equal(idp.hits.get('/.well-known/openid-configuration') ?? 0, before);
  });

  it('caches verified tokens: a repeated token costs no fetch and returns the same identity', async (t) => {
    const a = createAuthenticator([providerFor(idp, { jwksUrl: idp.jwksUrl })]);
    t.after(() => a.close());
    const token = await idp.jwt('alice');
    const first = await a.authenticate(`Bearer ${token}`);
    const jwksHits = idp.hits.get('/jwks');
    const second = await a.authenticate(`Bearer ${token}`);
    assert.equal(second, first);
    assert.equal(idp.hits.get('/jwks'), jwksHits);
    assert.ok(Object.isFrozen(first.claims), 'cached claims are frozen so no stage can add or replace one for the next request');
  });

  it('does not serve a cached token after its exp', async (t) => {
    const a = createAuthenticator([providerFor(idp, { jwksUrl: idp.jwksUrl })]);
    t.after(() => a.close());
    const token = await idp.sign({ exp: Math.floor(Date.now() / 1000) + 1 });
    assert.equal((await a.authenticate(`Bearer ${token}`)).subject, 'alice');
    // Poll (bounded) until the second passes: from then on the cache must not answer for the token.
    const deadline = Date.now() + 5000;
    for (;;) {
      try {
        await a.authenticate(`Bearer ${token}`);
      } catch (err) {
        assert.ok(err instanceof AuthError);
        assert.equal(err.description, 'token expired');
        break;
      }
      if (Date.now() > deadline) assert.fail('a token past its exp was still accepted');
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it('validates opaque tokens by introspection and keeps every claim', async (t) => {
    const a = createAuthenticator([
      providerFor(idp, { introspectionUrl: idp.introspectionUrl, clientId: idp.introspection.clientId, clientSecret: idp.introspection.clientSecret }),
    ]);
    t.after(() => a.close());
    const opaque = await idp.opaque('bob');
    assert.ok(!opaque.includes('.'), 'an opaque token');
    const id = await a.authenticate(`Bearer ${opaque}`);
    assert.equal(id.subject, 'bob');
    assert.equal(id.email, 'bob@example.test');
    assert.deepEqual(id.claims.groups, ['sales'], 'custom claims survive introspection');
    assert.equal(id.claims.org, 'acme');
    assert.equal(id.claims.scope, 'mcp:read');
  });

  it('validates a new token once for concurrent requests (one introspection call)', async (t) => {
    const a = createAuthenticator([
      providerFor(idp, { introspectionUrl: idp.introspectionUrl, clientId: idp.introspection.clientId, clientSecret: idp.introspection.clientSecret }),
    ]);
    t.after(() => a.close());
    const opaque = await idp.opaque('alice');
    const before = idp.hits.get('/token/introspection') ?? 0;
    const ids = await Promise.all(Array.from({ length: 8 }, () => a.authenticate(`Bearer ${opaque}`)));
    assert.ok(ids.every((id) => id === ids[0] && id.subject === 'alice'));
    assert.equal((idp.hits.get('/token/introspection') ?? 0) - before, 1);
  });

  it('reads the client secret from a file', async (t) => {
    const secretFile = join(dir, 'secret');
    writeFileSync(secretFile, `${idp.introspection.clientSecret}\n`);
    const a = createAuthenticator([
      providerFor(idp, { introspectionUrl: idp.introspectionUrl, clientId: idp.introspection.clientId, clientSecretFile: secretFile }),
    ]);
    t.after(() => a.close());
    assert.equal((await a.authenticate(`Bearer ${await idp.opaque('alice')}`)).subject, 'alice');
  });

  it('rejects revoked (inactive) opaque tokens, bad client credentials, and opaque tokens without introspection', async (t) => {
    const good = createAuthenticator([
      providerFor(idp, { introspectionUrl: idp.introspectionUrl, clientId: idp.introspection.clientId, clientSecret: idp.introspection.clientSecret }),
    ]);
    const badSecret = createAuthenticator([
      providerFor(idp, { introspectionUrl: idp.introspectionUrl, clientId: idp.introspection.clientId, clientSecret: 'wrong' }),
    ]);
    const none = createAuthenticator([providerFor(idp)]);
    t.after(() => Promise.all([good.close(), badSecret.close(), none.close()]));
    const opaque = await idp.opaque('alice');
    await idp.revoke(opaque);
    assert.equal((await rejection(good, `Bearer ${opaque}`)).description, 'token is not active');
    const fresh = await idp.opaque('alice');
    assert.equal((await rejection(badSecret, `Bearer ${fresh}`)).description, 'introspection unauthorized');
    const e = await rejection(none, `Bearer ${fresh}`);
    assert.equal(e.code, 'invalid_token');
    assert.match(e.description, /no introspection endpoint/);
  });

  it('tries providers in order; the first that accepts wins', async (t) => {
    const a = createAuthenticator([providerFor(idp, { name: 'first' }), providerFor(other, { name: 'second' })]);
    t.after(() => a.close());
    assert.equal((await a.authenticate(`Bearer ${await other.jwt('bob')}`)).claims.aud, other.audience);
    assert.equal((await a.authenticate(`Bearer ${await idp.jwt('alice')}`)).claims.aud, idp.audience);
    const e = await rejection(a, `Bearer ${await idp.sign({ exp: 1 })}`);
    assert.equal(e.description, 'token validation failed');
  });

  it('refetches the JWKS for an unknown kid, at a bounded rate', async (t) => {
    const a = createAuthenticator([providerFor(idp, { jwksUrl: idp.jwksUrl })], { jwksMinRefreshMs: 60_000 });
    t.after(() => a.close());
    await a.authenticate(`Bearer ${await idp.jwt('alice')}`);
    const base = idp.hits.get('/jwks')!;
    // The JWKS was fetched just now: unknown kids within the interval cause no fetch at all.
    for (let i = 0; i < 5; i++) {
      const e = await rejection(a, `Bearer ${await idp.sign({}, { kid: `unknown-${i}` })}`);
      assert.equal(e.description, 'key ID not found in JWKS');
    }
    assert.equal(idp.hits.get('/jwks')! - base, 0);
  });

  it('JwksCache: one refetch per interval for unknown kids, shared by concurrent callers', async () => {
    let clock = 1_000_000;
    let loads = 0;
    const cache = new JwksCache(
      async () => {
        loads++;
        return { keys: idp.jwks.keys };
      },
      { minRefreshMs: 30_000, now: () => clock },
    );
    await Promise.all([cache.getKey('rs-1', 'RS256'), cache.getKey('es-1', 'ES256'), cache.getKey('rs-1', 'RS256')]);
    assert.equal(loads, 1);
    clock += 10_000;
    assert.equal(await cache.getKey('nope', 'RS256'), undefined);
    assert.equal(loads, 1, 'too soon after the last fetch');
    clock += 25_000;
    await Promise.all([cache.getKey('nope', 'RS256'), cache.getKey('nope2', 'RS256')]);
    assert.equal(loads, 2, 'one fetch for both unknown kids');
    assert.equal(await cache.getKey('nope3', 'RS256'), undefined);
    assert.equal(loads, 2);
    clock += 11 * 60_000;
    assert.ok(await cache.getKey('rs-1', 'RS256'));
    assert.equal(loads, 3, 'refetched once the JWKS is older than its max age');
  });

  it('picks up a rotated key when an unknown kid appears', async (t) => {
    // A JWKS served by the IdP's interceptor: first without, then with the key the token names.
    let served = { keys: idp.jwks.keys.filter((k) => k.kid !== 'rs-1') };
    idp.intercept((req, res) => {
      if (req.url !== '/rotating-jwks') return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(served));
      return true;
    });
    t.after(() => idp.intercept(undefined));
    const a = createAuthenticator([providerFor(idp, { jwksUrl: `${idp.issuer}/rotating-jwks` })], { jwksMinRefreshMs: 0 });
    t.after(() => a.close());
    const token = await idp.jwt('alice');
    assert.equal((await rejection(a, `Bearer ${token}`)).description, 'key ID not found in JWKS');
    served = { keys: idp.jwks.keys };
    assert.equal((await a.authenticate(`Bearer ${token}`)).subject, 'alice');
  });

  it('fails closed when discovery or the JWKS is unavailable, and recovers', async (t) => {
    let broken = true;
    idp.intercept((req, res) => {
      if (!broken || !req.url?.startsWith('/.well-known/')) return false;
      res.writeHead(503);
      res.end();
      return true;
    });
    t.after(() => idp.intercept(undefined));
    const a = createAuthenticator([providerFor(idp)]);
    t.after(() => a.close());
    const token = await idp.jwt('alice');
    const e = await rejection(a, `Bearer ${token}`);
    assert.equal(e.code, 'invalid_token');
    assert.match(e.description, /OIDC discovery failed/);
    broken = false;
    // A failed fetch is remembered for a second at most; poll until the next one succeeds.
    const deadline = Date.now() + 5000;
    for (;;) {
      try {
        assert.equal((await a.authenticate(`Bearer ${token}`)).subject, 'alice');
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });

  it('refuses an untrusted certificate (no CA bundle)', async (t) => {
    const a = createAuthenticator([{ issuer: idp.issuer, audience: idp.audience, allowPrivateIp: true }]);
    t.after(() => a.close());
    const e = await rejection(a, `Bearer ${await idp.jwt('alice')}`);
    assert.match(e.description, /certificate|self.signed|issuer/i);
  });

  it('refuses a provider at a private address unless allowed', async (t) => {
    const a = createAuthenticator([{ issuer: idp.issuer, audience: idp.audience, caBundle: idp.caFile }]);
    const viaName = createAuthenticator([{ issuer: idp.issuer, audience: idp.audience, caBundle: idp.caFile, jwksUrl: `https://localhost:${idp.port}/jwks` }]);
    t.after(() => Promise.all([a.close(), viaName.close()]));
    const before = idp.hits.get('/.well-known/openid-configuration') ?? 0;
    const token = await idp.jwt('alice');
    assert.match((await rejection(a, `Bearer ${token}`)).description, /private IP address/);
    assert.match((await rejection(viaName, `Bearer ${token}`)).description, /private IP address/, 'checked after DNS resolution');
    assert.equal(idp.hits.get('/.well-known/openid-configuration') ?? 0, before, 'no request was made');
  });

  it('refuses configuration problems at startup', () => {
    assert.throws(() => createAuthenticator([{ issuer: '' }]), /issuer is required/);
    assert.throws(() => createAuthenticator([{ issuer: 'http://idp.example' }]), /must use https/);
    assert.throws(() => createAuthenticator([{ issuer: 'https://idp.example', authTokenFile: join(dir, 'missing') }]), /cannot read the auth token file/);
    const empty = join(dir, 'empty');
    writeFileSync(empty, '  \n');
    assert.throws(() => createAuthenticator([{ issuer: 'https://idp.example', authTokenFile: empty }]), /is empty/);
    assert.throws(() => createAuthenticator([{ issuer: 'https://idp.example', clientId: 'c', clientSecretFile: join(dir, 'nope') }]), /client secret file/);
  });
});
