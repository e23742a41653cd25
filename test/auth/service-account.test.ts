/**
 * Service-account tokens of a container orchestrator, against a local stand-in for the API server:
 * it serves the JWKS at /openid/v1/jwks over TLS (certificate from a test CA) and only to callers that
 * present the bearer token from the token file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { AuthError, createAuthenticator, DEFAULT_SERVICE_ACCOUNT_ISSUER, serviceAccountProvider } from '../../src/auth/index.js';
import { createTestCa, type TestCa } from '../helpers/oidc-provider.js';

let ca: TestCa;
let server: Server;
let apiServer: string;
let dir: string;
let tokenFile: string;
let privateKey: CryptoKey;
let expectedBearer = 'pod-token-1';
let jwksRequests = 0;
let refused = 0;

before(async () => {
  ca = createTestCa();
  dir = mkdtempSync(join(tmpdir(), 'thv-sa-'));
  tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${expectedBearer}\n`);
  const pair = await generateKeyPair('RS256', { extractable: true });
  privateKey = pair.privateKey;
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'sa-key', alg: 'RS256', use: 'sig' }] });
  const cert = ca.issue('kube-apiserver', ['kubernetes.default.svc']);
  server = createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    if (req.url !== '/openid/v1/jwks') {
      res.writeHead(404);
      res.end();
      return;
    }
    if (req.headers.authorization !== `Bearer ${expectedBearer}`) {
      refused++;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"kind":"Status","status":"Failure","reason":"Unauthorized","code":401}');
      return;
    }
    jwksRequests++;
    res.writeHead(200, { 'content-type': 'application/jwk-set+json' });
    res.end(jwks);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiServer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  ca.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function saToken(claims: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: DEFAULT_SERVICE_ACCOUNT_ISSUER,
    aud: ['thv'],
    sub: 'system:serviceaccount:tools:mcp-client',
    iat: now,
    nbf: now,
    exp: now + 600,
    'kubernetes.io': { namespace: 'tools', serviceaccount: { name: 'mcp-client', uid: 'u-1' } },
    ...claims,
  })
    .setProtectedHeader({ alg: 'RS256', kid: 'sa-key' })
    .sign(privateKey);
}

describe('service-account tokens', () => {
  it('builds the in-cluster provider from the environment', () => {
    const p = serviceAccountProvider({ env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, audience: 'thv' });
    assert.deepEqual(p, {
      name: 'kubernetes',
      issuer: DEFAULT_SERVICE_ACCOUNT_ISSUER,
      audience: 'thv',
      jwksUrl: 'https://10.96.0.1:443/openid/v1/jwks',
      caBundle: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
      authTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      allowPrivateIp: true,
    });
    assert.throws(() => serviceAccountProvider({ env: {} }), /not in a cluster/);
  });

  it('accepts a service-account token, fetching the JWKS with the pod token over TLS from the test CA', async (t) => {
    const a = createAuthenticator([serviceAccountProvider({ apiServer, caFile: ca.caFile, tokenFile, audience: 'thv' })]);
    t.after(() => a.close());
    const id = await a.authenticate(`Bearer ${await saToken()}`);
    assert.equal(id.subject, 'system:serviceaccount:tools:mcp-client');
    assert.deepEqual((id.claims['kubernetes.io'] as { namespace: string }).namespace, 'tools');
    assert.ok(jwksRequests >= 1);
  });

  it('rejects tokens for another audience or issuer', async (t) => {
    const a = createAuthenticator([serviceAccountProvider({ apiServer, caFile: ca.caFile, tokenFile, audience: 'thv' })]);
    t.after(() => a.close());
    await assert.rejects(a.authenticate(`Bearer ${await saToken({ aud: ['https://kubernetes.default.svc'] })}`), (e: unknown) => e instanceof AuthError && e.description === 'invalid audience');
    await assert.rejects(a.authenticate(`Bearer ${await saToken({ iss: 'https://other-cluster' })}`), (e: unknown) => e instanceof AuthError && e.description === 'invalid issuer');
  });

  it('fails closed when the API server refuses the pod token, and follows a rotated token file', async (t) => {
    const a = createAuthenticator([serviceAccountProvider({ apiServer, caFile: ca.caFile, tokenFile, audience: 'thv' })]);
    t.after(() => a.close());
    expectedBearer = 'pod-token-2'; // the API server now wants the rotated token
    const before = refused;
    // The refusal is reported without the pod's token.
    await assert.rejects(a.authenticate(`Bearer ${await saToken()}`), (e: unknown) => e instanceof AuthError && /401/.test(e.description) && !/pod-token/.test(`${e.description} ${e.message}`));
    assert.equal(refused - before, 1);
    writeFileSync(tokenFile, 'pod-token-2\n');
    // The failed fetch is remembered for a second; poll until the next fetch uses the new token.
    const deadline = Date.now() + 5000;
    for (;;) {
      try {
        assert.equal((await a.authenticate(`Bearer ${await saToken()}`)).subject, 'system:serviceaccount:tools:mcp-client');
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });

  it('does not trust the API server without the cluster CA', async (t) => {
    const a = createAuthenticator([{ ...serviceAccountProvider({ apiServer, tokenFile, audience: 'thv' }), caBundle: undefined }]);
    t.after(() => a.close());
    await assert.rejects(a.authenticate(`Bearer ${await saToken()}`), (e: unknown) => e instanceof AuthError && /certificate/i.test(e.description));
  });
});
