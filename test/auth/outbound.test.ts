/**
 * The client auth uses to reach identity providers: HTTPS only unless allowed, private destinations
 * refused after DNS resolution and on every redirect hop, bounded bodies, timeouts.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createOutboundClient } from '../../src/auth/outbound.js';

let server: Server;
let port: number;
const pending = new Set<import('node:http').ServerResponse>();

before(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/ok':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
        return;
      case '/redirect':
        res.writeHead(302, { location: url.searchParams.get('to') ?? '/ok' });
        res.end();
        return;
      case '/big':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(Buffer.alloc(300_000, 0x20));
        return;
      case '/hang':
        pending.add(res);
        return;
      default:
        res.writeHead(404);
        res.end();
    }
  });
  // 127.0.0.2 is loopback too on Linux; the tests below call it "public" through the isPrivate hook.
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  for (const res of pending) res.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Everything is private except 127.0.0.2 (the stand-in for a public address). */
const onlyPublic2 = (address: string): boolean => address !== '127.0.0.2';

describe('outbound client', () => {
  it('refuses plain HTTP unless allowed', async (t) => {
    const strict = createOutboundClient({ allowPrivateIp: true });
    const lax = createOutboundClient({ allowPrivateIp: true, allowHttp: true });
    t.after(() => Promise.all([strict.close(), lax.close()]));
    await assert.rejects(strict.request(`http://127.0.0.2:${port}/ok`, { maxBytes: 1000 }), /HTTPS is required/);
    const res = await lax.request(`http://127.0.0.2:${port}/ok`, { maxBytes: 1000 });
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), '{"ok":true}');
  });

  it('refuses private IP literals and private names after DNS resolution', async (t) => {
    const c = createOutboundClient({ allowHttp: true });
    t.after(() => c.close());
    await assert.rejects(c.request(`http://127.0.0.2:${port}/ok`, { maxBytes: 1000 }), /private IP address/);
    await assert.rejects(c.request(`http://[::1]:${port}/ok`, { maxBytes: 1000 }), /private IP address/);
    await assert.rejects(c.request(`http://localhost:${port}/ok`, { maxBytes: 1000 }), /private IP address/);
    await assert.rejects(c.request(`http://169.254.169.254/latest/meta-data`, { maxBytes: 1000 }), /private IP address/);
  });

  it('checks every redirect hop: to a private IP literal and to a name that resolves privately', async (t) => {
    const c = createOutboundClient({ allowHttp: true, isPrivate: onlyPublic2 });
    t.after(() => c.close());
    // The first hop is allowed ("public"), so these fail on the redirect target.
    assert.equal((await c.request(`http://127.0.0.2:${port}/redirect?to=/ok`, { maxBytes: 1000 })).status, 200);
    await assert.rejects(
      c.request(`http://127.0.0.2:${port}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${port}/ok`)}`, { maxBytes: 1000 }),
      /private IP address/,
    );
    await assert.rejects(
      c.request(`http://127.0.0.2:${port}/redirect?to=${encodeURIComponent(`http://localhost:${port}/ok`)}`, { maxBytes: 1000 }),
      /private IP address/,
    );
    // And a redirect may not downgrade to HTTP when HTTP is not allowed.
    const https = createOutboundClient({ isPrivate: onlyPublic2 });
    t.after(() => https.close());
    await assert.rejects(https.request(`http://127.0.0.2:${port}/ok`, { maxBytes: 1000 }), /HTTPS is required/);
  });

  it('allows private destinations when asked', async (t) => {
    const c = createOutboundClient({ allowHttp: true, allowPrivateIp: true });
    t.after(() => c.close());
    const res = await c.request(`http://127.0.0.2:${port}/redirect?to=${encodeURIComponent(`http://127.0.0.2:${port}/ok`)}`, { maxBytes: 1000 });
    assert.equal(res.status, 200);
  });

  it('bounds response sizes', async (t) => {
    const c = createOutboundClient({ allowHttp: true, allowPrivateIp: true });
    t.after(() => c.close());
    await assert.rejects(c.request(`http://127.0.0.2:${port}/big`, { maxBytes: 64 * 1024 }), /larger than 65536 bytes/);
  });

  it('times out', async (t) => {
    const c = createOutboundClient({ allowHttp: true, allowPrivateIp: true, timeoutMs: 300 });
    t.after(() => c.close());
    const started = Date.now();
    await assert.rejects(c.request(`http://127.0.0.2:${port}/hang`, { maxBytes: 1000 }), /failed/);
    assert.ok(Date.now() - started < 5000);
  });
});
