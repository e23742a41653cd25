/**
 * Hostile tokens and headers through the proxy's auth stage, over real HTTP, against a real OpenID
 * provider. Every case must be a 401 with a JSON body and a correct `WWW-Authenticate`; none may reach
 * the server behind the stage.
 */
import assert from 'node:assert/strict';
import { createHmac, createPublicKey, generateKeyPairSync, KeyObject, sign as cryptoSign } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { exportJWK, SignJWT } from 'jose';
import { createLogger } from '../../src/logging.js';
import { proxyAuth, type ProxyAuth } from '../../src/middleware/auth.js';
import { startHarness, type Harness, type HarnessResponse } from '../helpers/middleware-harness.js';
import { startTestIdp, type TestIdp } from '../helpers/oidc-provider.js';

const RESOURCE = 'https://mcp.example.test/mcp';
const METADATA = 'https://mcp.example.test/.well-known/oauth-protected-resource/mcp';

let idp: TestIdp;
let auth: ProxyAuth;
let harness: Harness;
let brokenAuth: ProxyAuth;
let brokenHarness: Harness;

const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
const now = (): number => Math.floor(Date.now() / 1000);

before(async () => {
  idp = await startTestIdp();
  const silent = createLogger({ destination: { write: () => true } as unknown as NodeJS.WritableStream });
  const provider = {
    issuer: idp.issuer,
    audience: idp.audience,
    caBundle: idp.caFile,
    allowPrivateIp: true,
    introspectionUrl: idp.introspectionUrl,
    clientId: idp.introspection.clientId,
    clientSecret: idp.introspection.clientSecret,
  };
  auth = proxyAuth({ providers: [provider], resourceUrl: RESOURCE, scopes: ['openid', 'mcp:read'] }, silent);
  harness = await startHarness([auth.stage], (_m, ctx) => ({ jsonrpc: '2.0', id: 1, result: { subject: ctx.identity?.subject } }));
  // Introspection that fails outright (nothing listens there).
  brokenAuth = proxyAuth({ providers: [{ ...provider, introspectionUrl: 'https://127.0.0.1:1/introspect' }], resourceUrl: RESOURCE }, silent);
  brokenHarness = await startHarness([brokenAuth.stage]);
});
after(async () => {
  await harness.close();
  await brokenHarness.close();
  await auth.close();
  await brokenAuth.close();
  await idp.close();
});

function parseChallenge(header: string): Record<string, string> {
  assert.match(header, /^Bearer /);
  const params: Record<string, string> = {};
  for (const m of header.slice(7).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) params[m[1]!] = m[2]!.replace(/\\(.)/g, '$1');
  return params;
}

function assertRejected(res: HarnessResponse, code: 'invalid_token' | 'invalid_request', opts: { scope?: boolean } = {}): Record<string, string> {
  assert.equal(res.status, 401, `status, body: ${res.text}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json as { error: string; error_description: string };
  assert.equal(body.error, code);
  assert.equal(typeof body.error_description, 'string');
  const www = res.headers['www-authenticate'];
  assert.equal(typeof www, 'string');
  const p = parseChallenge(www as string);
  assert.equal(p.realm, idp.issuer);
  assert.equal(p.resource_metadata, METADATA);
  if (opts.scope !== false) assert.equal(p.scope, 'openid mcp:read');
  assert.equal(p.error, code);
  assert.ok(p.error_description && p.error_description.length > 0);
  return p;
}

async function send(authorization: string | string[] | undefined, h: Harness = harness): Promise<HarnessResponse> {
  // An array is sent as repeated header lines (OutgoingHttpHeaders types authorization as a single string).
  const headers = (authorization === undefined ? {} : { authorization }) as OutgoingHttpHeaders;
  return h.rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers);
}

describe('hostile tokens and headers', () => {
  const cases: Array<[string, () => Promise<string | string[] | undefined>, 'invalid_token' | 'invalid_request', RegExp?]> = [
    ['alg none', async () => `Bearer ${b64({ alg: 'none', kid: 'rs-1' })}.${b64({ iss: idp.issuer, aud: idp.audience, sub: 'alice', exp: now() + 300 })}.`, 'invalid_token', /signing method/],
    ['alg none, no kid', async () => `Bearer ${b64({ alg: 'none' })}.${b64({ iss: idp.issuer, aud: idp.audience, sub: 'alice', exp: now() + 300 })}.`, 'invalid_token'],
    ['HS256 signed with the public key', async () => {
      const pem = createPublicKey({ key: idp.jwks.keys[0] as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
      const input = `${b64({ alg: 'HS256', kid: 'rs-1', typ: 'JWT' })}.${b64({ iss: idp.issuer, aud: idp.audience, sub: 'admin', exp: now() + 300 })}`;
      return `Bearer ${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`;
    }, 'invalid_token', /signing method: HS256/],
    ['PS256 (not an accepted algorithm)', async () => `Bearer ${b64({ alg: 'PS256', kid: 'rs-1' })}.${b64({ sub: 'a', exp: now() + 60 })}.c2ln`, 'invalid_token', /signing method/],
    ['expired', async () => `Bearer ${await idp.sign({ exp: now() - 5, iat: now() - 60 })}`, 'invalid_token', /expired/],
    ['nbf in the future', async () => `Bearer ${await idp.sign({ nbf: now() + 120 })}`, 'invalid_token', /nbf/],
    ['missing exp', async () => `Bearer ${await idp.sign({ exp: undefined })}`, 'invalid_token', /exp/],
    ['exp as a string', async () => `Bearer ${await idp.sign({ exp: String(now() + 300) })}`, 'invalid_token'],
    ['wrong iss', async () => `Bearer ${await idp.sign({ iss: 'https://evil.example' })}`, 'invalid_token', /invalid issuer/],
    ['iss with a trailing slash', async () => `Bearer ${await idp.sign({ iss: `${idp.issuer}/` })}`, 'invalid_token', /invalid issuer/],
    ['iss with padding', async () => `Bearer ${await idp.sign({ iss: ` ${idp.issuer}` })}`, 'invalid_token', /invalid issuer/],
    ['missing iss', async () => `Bearer ${await idp.sign({ iss: undefined })}`, 'invalid_token', /invalid issuer/],
    ['wrong aud', async () => `Bearer ${await idp.sign({ aud: 'https://other.example' })}`, 'invalid_token', /invalid audience/],
    ['aud array without ours', async () => `Bearer ${await idp.sign({ aud: ['https://a', 'https://b'] })}`, 'invalid_token', /invalid audience/],
    ['missing aud', async () => `Bearer ${await idp.sign({ aud: undefined })}`, 'invalid_token', /invalid audience/],
    ['missing sub', async () => `Bearer ${await idp.sign({ sub: undefined })}`, 'invalid_token', /sub/],
    ['unknown kid', async () => `Bearer ${await idp.sign({}, { kid: 'not-a-key' })}`, 'invalid_token', /key ID not found/],
    ['missing kid', async () => `Bearer ${await idp.sign({}, { kid: undefined })}`, 'invalid_token', /missing kid/],
    ['jku pointing elsewhere', async () => `Bearer ${await idp.sign({}, { kid: 'evil', jku: 'https://evil.example/jwks' })}`, 'invalid_token', /key ID not found/],
    ['attacker key embedded in the header', async () => {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const jwk = await exportJWK(publicKey);
      const token = await new SignJWT({ iss: idp.issuer, aud: idp.audience, sub: 'admin', exp: now() + 300 })
        .setProtectedHeader({ alg: 'RS256', kid: 'rs-1', jwk })
        .sign(privateKey);
      return `Bearer ${token}`;
    }, 'invalid_token', /signature/],
    ['crit header the verifier does not know', async () => {
      const input = `${b64({ alg: 'RS256', kid: 'rs-1', crit: ['x-unknown'], 'x-unknown': 1 })}.${b64({ iss: idp.issuer, aud: idp.audience, sub: 'a', exp: now() + 60 })}`;
      const key = KeyObject.from(idp.rsPrivateKey);
      return `Bearer ${input}.${cryptoSign('sha256', Buffer.from(input), key).toString('base64url')}`;
    }, 'invalid_token'],
    ['tampered payload', async () => {
      const [h, , s] = (await idp.jwt('alice')).split('.');
      return `Bearer ${h}.${b64({ iss: idp.issuer, aud: idp.audience, sub: 'admin', exp: now() + 3600 })}.${s}`;
    }, 'invalid_token', /signature/],
    ['bad signature', async () => {
      const token = await idp.jwt('alice');
      const sig = Buffer.from(token.split('.')[2]!, 'base64url');
      sig[10] = sig[10]! ^ 0xff;
      return `Bearer ${token.split('.').slice(0, 2).join('.')}.${sig.toString('base64url')}`;
    }, 'invalid_token', /signature/],
    ['signature of a different token', async () => {
      const a = (await idp.jwt('alice')).split('.');
      const b = (await idp.jwt('bob')).split('.');
      return `Bearer ${a[0]}.${a[1]}.${b[2]}`;
    }, 'invalid_token', /signature/],
    ['ES256 header over an RSA key id', async () => {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const input = `${b64({ alg: 'ES256', kid: 'rs-1' })}.${b64({ iss: idp.issuer, aud: idp.audience, sub: 'a', exp: now() + 60 })}`;
      return `Bearer ${input}.${cryptoSign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
    }, 'invalid_token'],
    ['malformed: two segments', async () => 'Bearer abc.def', 'invalid_token'],
    ['malformed: segments that are not JSON', async () => 'Bearer a.b.c', 'invalid_token'],
    ['malformed: five segments (JWE shape)', async () => 'Bearer a.b.c.d.e', 'invalid_token'],
    ['oversized token', async () => `Bearer ${'a'.repeat(13_000)}`, 'invalid_request', /longer than/],
    ['no Authorization header', async () => undefined, 'invalid_request', /required/],
    ['Basic scheme', async () => `Basic ${Buffer.from('alice:pw').toString('base64')}`, 'invalid_request'],
    ['lower-case bearer', async () => `bearer ${await idp.jwt('alice')}`, 'invalid_request'],
    ['two spaces', async () => `Bearer  ${await idp.jwt('alice')}`, 'invalid_request'],
    ['a second credential after the token', async () => `Bearer ${await idp.jwt('alice')}, Basic eDp5`, 'invalid_request'],
    ['quoted token', async () => `Bearer "${await idp.jwt('alice')}"`, 'invalid_request'],
    ['two Authorization headers (first valid)', async () => [`Bearer ${await idp.jwt('alice')}`, 'Bearer x'], 'invalid_request', /more than one/],
    ['two Authorization headers (both valid)', async () => [`Bearer ${await idp.jwt('alice')}`, `Bearer ${await idp.jwt('bob')}`], 'invalid_request', /more than one/],
    ['introspection says inactive (revoked)', async () => {
      const t = await idp.opaque('alice');
      await idp.revoke(t);
      return `Bearer ${t}`;
    }, 'invalid_token', /not active/],
    ['unknown opaque token', async () => 'Bearer thisTokenWasNeverIssued0123456789', 'invalid_token', /not active/],
  ];

  for (const [name, make, code, description] of cases) {
    it(`rejects: ${name}`, async () => {
      const authorization = await make();
      const res = await send(authorization);
      const p = assertRejected(res, code);
      if (description) assert.match(p.error_description!, description);
      // Tokens never come back in the answer: no JWT, and no part of what was sent (opaque tokens too).
      const answer = res.text + String(res.headers['www-authenticate']);
      assert.ok(!/eyJ[\w-]{20,}/.test(answer), 'no token echoed');
      for (const header of [authorization ?? []].flat()) {
        const credential = header.replace(/^\S+\s+/, '').replace(/^"|"$/g, '');
        for (const part of credential.split(/[.,\s]+/).filter((x) => x.length >= 16)) {
          assert.ok(!answer.includes(part.slice(0, 16)), `no part of the credential echoed (${name})`);
        }
      }
    });
  }

  it('rejects when introspection fails', async () => {
    const res = await send(`Bearer ${await idp.opaque('alice')}`, brokenHarness);
    const p = assertRejected(res, 'invalid_token', { scope: false });
    assert.match(p.error_description!, /introspection failed/);
  });

  it('accepted none of them, and still accepts a good token', async () => {
    assert.equal(harness.forwarded.length, 0, 'no hostile request reached the server');
    const res = await send(`Bearer ${await idp.jwt('bob')}`);
    assert.equal(res.status, 200);
    assert.deepEqual((res.messages[0] as { result: unknown }).result, { subject: 'bob' });
    assert.equal(harness.forwarded.length, 1);
  });

  it("answers with ToolHive's body for an invalid token", async () => {
    const res = await send(`Bearer ${await idp.sign({ exp: now() - 1 })}`);
    assert.deepEqual(res.json, { error: 'invalid_token', error_description: 'Invalid token: token expired' });
  });
});
