/**
 * Pure formats: bearer extraction, WWW-Authenticate, RFC 9728 metadata and its URL, private addresses,
 * claim rules. (ToolHive's pinned cases, spec §3, plus our stricter header rules.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AuthError,
  extractBearerToken,
  isPrivateIp,
  localUserIdentity,
  MAX_TOKEN_LENGTH,
  protectedResourceMetadata,
  resourceMetadataUrl,
  wwwAuthenticateHeader,
} from '../../src/auth/index.js';
import { checkClaims, identityFromClaims } from '../../src/auth/claims.js';
import { TokenCache } from '../../src/auth/token-cache.js';

function rejects(header: string | string[] | undefined, code: string, description?: RegExp): void {
  assert.throws(
    () => extractBearerToken(header),
    (err: unknown) => {
      assert.ok(err instanceof AuthError);
      assert.equal(err.code, code);
      assert.equal(err.status, 401);
      if (description) assert.match(err.description, description);
      return true;
    },
  );
}

describe('extractBearerToken', () => {
  it('accepts exactly "Bearer <b64token>"', () => {
    assert.equal(extractBearerToken('Bearer abc.def-_~+/=='), 'abc.def-_~+/==');
    assert.equal(extractBearerToken(['Bearer x']), 'x');
  });
  it('refuses everything else with invalid_request', () => {
    rejects(undefined, 'invalid_request', /authorization header required/);
    rejects('', 'invalid_request', /authorization header required/);
    rejects('bearer x', 'invalid_request', /expected 'Bearer <token>'/);
    rejects('Basic dXNlcjpwYXNz', 'invalid_request', /expected 'Bearer <token>'/);
    rejects('BearerX', 'invalid_request');
    rejects('Bearer ', 'invalid_request', /empty token/);
    rejects('Bearer    ', 'invalid_request', /empty token/);
    rejects('Bearer  abc', 'invalid_request', /no extra whitespace/);
    rejects('Bearer abc ', 'invalid_request', /no extra whitespace/);
    rejects('Bearer token with spaces', 'invalid_request');
    rejects('Bearer "abc"', 'invalid_request');
    rejects('Bearer abc\tdef', 'invalid_request');
    rejects('Bearer a=b', 'invalid_request');
    rejects(['Bearer a', 'Bearer b'], 'invalid_request', /more than one/);
    rejects(`Bearer ${'a'.repeat(MAX_TOKEN_LENGTH + 1)}`, 'invalid_request', /longer than/);
  });
});

describe('wwwAuthenticateHeader', () => {
  it("matches ToolHive's pinned format", () => {
    assert.equal(
      wwwAuthenticateHeader({
        realm: 'https://issuer.example.com',
        resourceMetadataUrl: 'https://resource.example.com/.well-known/oauth-protected-resource',
        error: 'invalid_token',
        errorDescription: 'failed to parse "token", reason',
      }),
      'Bearer realm="https://issuer.example.com", resource_metadata="https://resource.example.com/.well-known/oauth-protected-resource", error="invalid_token", error_description="failed to parse \\"token\\", reason"',
    );
  });
  it('orders realm, resource_metadata, scope, error, error_description and drops empty ones', () => {
    assert.equal(
      wwwAuthenticateHeader({ realm: 'r', scope: 'openid mcp', error: 'invalid_request', errorDescription: 'd' }),
      'Bearer realm="r", scope="openid mcp", error="invalid_request", error_description="d"',
    );
    assert.equal(wwwAuthenticateHeader({ realm: '' }), 'Bearer');
  });
  it('cannot be split by CR/LF and escapes backslashes', () => {
    const h = wwwAuthenticateHeader({ realm: 'a\r\nSet-Cookie: x', errorDescription: 'back\\slash' });
    assert.equal(h, 'Bearer realm="aSet-Cookie: x", error_description="back\\\\slash"');
  });
});

describe('RFC 9728', () => {
  it('builds the metadata URL from the resource path', () => {
    assert.equal(resourceMetadataUrl('https://api.example.com/v1/mcp'), 'https://api.example.com/.well-known/oauth-protected-resource/v1/mcp');
    assert.equal(resourceMetadataUrl('http://localhost:8080/'), 'http://localhost:8080/.well-known/oauth-protected-resource');
    assert.equal(resourceMetadataUrl('http://localhost:9090/mcp/'), 'http://localhost:9090/.well-known/oauth-protected-resource/mcp/');
    assert.equal(resourceMetadataUrl('https://h/x?q=1#f'), 'https://h/.well-known/oauth-protected-resource/x');
    assert.equal(resourceMetadataUrl('not a url'), undefined);
  });
  it('builds the document', () => {
    assert.deepEqual(protectedResourceMetadata({ resource: 'https://r', authorizationServers: ['https://i'], scopes: ['openid'], resourceDocumentation: 'https://docs' }), {
      resource: 'https://r',
      authorization_servers: ['https://i'],
      bearer_methods_supported: ['header'],
      scopes_supported: ['openid'],
      resource_documentation: 'https://docs',
    });
    // The registry service's form: no scopes_supported.
    assert.deepEqual(protectedResourceMetadata({ resource: '', authorizationServers: ['a', 'b'] }), {
      resource: '',
      authorization_servers: ['a', 'b'],
      bearer_methods_supported: ['header'],
    });
  });
});

describe('isPrivateIp', () => {
  it('refuses private, loopback, link-local and reserved addresses', () => {
    for (const a of ['127.0.0.1', '127.9.9.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
      '224.0.0.1', '240.0.0.1', '192.0.2.1', '::1', '::', 'fe80::1', 'fc00::1', 'fd12::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1',
      '64:ff9b::a00:1', '64:ff9b::10.0.0.1', '2002:a00:1::', '[::1]', 'not-an-ip']) {
      assert.equal(isPrivateIp(a), true, a);
    }
  });
  it('allows public addresses', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::']) {
      assert.equal(isPrivateIp(a), false, a);
    }
  });
});

describe('claim rules', () => {
  const now = 1_700_000_000_000;
  const base = { iss: 'https://i', aud: ['x', 'api'], sub: 's', exp: now / 1000 + 60 };
  const reason = (claims: Record<string, unknown>, rules = { issuer: 'https://i', audience: 'api' }): string => {
    try {
      checkClaims(claims, rules, now);
      return 'ok';
    } catch (err) {
      return (err as AuthError).description;
    }
  };
  it('checks iss byte for byte, aud membership, exp (mandatory) and nbf', () => {
    assert.equal(reason(base), 'ok');
    assert.equal(reason({ ...base, iss: 'https://i/' }), 'invalid issuer');
    assert.equal(reason({ ...base, iss: ' https://i' }), 'invalid issuer');
    assert.equal(reason({ ...base, aud: 'other' }), 'invalid audience');
    assert.equal(reason({ ...base, aud: undefined }), 'invalid audience');
    assert.equal(reason({ ...base, exp: undefined }), 'token has no valid exp claim');
    assert.equal(reason({ ...base, exp: '9999999999' }), 'token has no valid exp claim');
    assert.equal(reason({ ...base, exp: now / 1000 }), 'token expired');
    assert.equal(reason({ ...base, nbf: now / 1000 + 1 }), 'token not valid yet (nbf)');
    assert.equal(reason({ ...base, nbf: now / 1000 }), 'ok');
    assert.equal(reason({ ...base, iss: undefined }), 'invalid issuer');
  });
  it('needs a non-empty string sub for an identity', () => {
    assert.equal(identityFromClaims({ sub: 'u', name: 'N', email: 'e@x' }, 't').name, 'N');
    assert.throws(() => identityFromClaims({ sub: '' }, 't'), /sub/);
    assert.throws(() => identityFromClaims({ sub: 5 }, 't'), /sub/);
  });
  it("gives ToolHive's local-user identity", () => {
    const id = localUserIdentity('dev', 1_000_000);
    assert.equal(id.subject, 'dev');
    assert.equal(id.name, 'Local User: dev');
    assert.equal(id.email, 'dev@localhost');
    assert.deepEqual(id.claims, { sub: 'dev', iss: 'toolhive-local', aud: 'toolhive', exp: 1000 + 86400, iat: 1000, nbf: 1000, email: 'dev@localhost', name: 'Local User: dev' });
  });
});

describe('TokenCache', () => {
  const id = (subject: string) => ({ subject, claims: { sub: subject } });
  it('serves an identity until its expiry, not at or after it', () => {
    const c = new TokenCache(10);
    const k = TokenCache.key('Bearer abc');
    c.set(k, id('a'), 1_000);
    assert.equal(c.get(k, 999)?.subject, 'a');
    assert.equal(c.get(k, 1_000), undefined);
    assert.equal(c.size, 0, 'an expired entry is dropped');
  });
  it('is bounded (the oldest entry goes first) and can be turned off', () => {
    const c = new TokenCache(2);
    for (const t of ['t1', 't2', 't3']) c.set(TokenCache.key(t), id(t), Infinity);
    assert.equal(c.size, 2);
    assert.equal(c.get(TokenCache.key('t1'), 0), undefined);
    assert.equal(c.get(TokenCache.key('t3'), 0)?.subject, 't3');
    const off = new TokenCache(0);
    off.set(TokenCache.key('t'), id('t'), Infinity);
    assert.equal(off.size, 0);
  });
  it('is keyed by a SHA-256 of the header, never the token', () => {
    const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl';
    const k = TokenCache.key(`Bearer ${token}`);
    assert.equal(Buffer.from(k, 'base64').length, 32);
    assert.ok(!k.includes(token) && !k.includes('c2lnbmF0dXJl'));
    assert.notEqual(TokenCache.key(`Bearer ${token}x`), k);
  });
});
