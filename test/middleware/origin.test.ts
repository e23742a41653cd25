import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  canonicalizeOrigin,
  isLoopbackHost,
  originGuard,
  originGuardWarning,
  resolveAllowedOrigins,
  type OriginGuardOptions,
} from '../../src/middleware/origin.js';
import { startHarness, type Harness } from '../helpers/middleware-harness.js';

const ORIGIN_BODY = '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Origin not allowed"}}';
const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

/** Starts a harness whose guard is built for the harness's own listening port. */
function withGuard(make: (port: number) => OriginGuardOptions): () => Harness {
  let h: Harness | undefined;
  before(async () => {
    h = await startHarness((port) => [originGuard(make(port))]);
  });
  after(async () => {
    await h?.close();
  });
  return () => h!;
}
const guardPort = (h: Harness): number => h.port;

const post = (h: Harness, headers: Record<string, string | string[]>) =>
  h.request({ method: 'POST', body: PING, headers: { 'content-type': 'application/json', ...headers } });

describe('origin helpers', () => {
  it('isLoopbackHost', () => {
    for (const h of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) {
      assert.equal(isLoopbackHost(h), true, h);
    }
    for (const h of ['0.0.0.0', '::', '192.168.1.10', 'example.com', 'localhost.', '128.0.0.1', '']) {
      assert.equal(isLoopbackHost(h), false, h);
    }
  });

  it('resolveAllowedOrigins', () => {
    assert.deepEqual(resolveAllowedOrigins('127.0.0.1', 8080), ['http://localhost:8080', 'http://127.0.0.1:8080', 'http://[::1]:8080']);
    assert.deepEqual(resolveAllowedOrigins('0.0.0.0', 8080), []);
    assert.deepEqual(resolveAllowedOrigins('localhost', 0), []);
    assert.deepEqual(resolveAllowedOrigins('0.0.0.0', 8080, ['https://app.example']), ['https://app.example']);
    assert.deepEqual(resolveAllowedOrigins('127.0.0.1', 8080, []), ['http://localhost:8080', 'http://127.0.0.1:8080', 'http://[::1]:8080']);
  });

  it('canonicalizeOrigin (ToolHive CanonicalizeOrigin cases)', () => {
    const cases: Array<[string, string | undefined]> = [
      ['http://localhost:8080', 'http://localhost:8080'],
      ['HTTP://LocalHost:8080', 'http://localhost:8080'],
      ['https://Example.COM', 'https://example.com'],
      ['http://[::1]:8080', 'http://[::1]:8080'],
      ['http://[0:0:0:0:0:0:0:1]:8080', 'http://[::1]:8080'],
      ['http://[::FFFF:7F00:1]', 'http://[::ffff:7f00:1]'],
      ['http://localhost:08080', 'http://localhost:08080'], // port kept as written
      ['http://localhost:80', 'http://localhost:80'], // default port not dropped
      ['http://localhost:8080/path?q#f', 'http://localhost:8080'],
      ['http://localhost:', 'http://localhost'],
      ['http://user:pass@localhost:8080', undefined],
      ['http://user@localhost:8080', undefined],
      ['null', undefined],
      ['localhost:8080', undefined],
      ['http:localhost', undefined],
      ['http://', undefined],
      ['http://localhost:80a', undefined],
      ['http://[::1', undefined],
      ['http://::1:8080', undefined],
      ['http://local host', undefined],
      ['http://a, http://b', undefined],
      ['1http://x', undefined],
      ['https://*.example.com', undefined],
    ];
    for (const [input, want] of cases) assert.equal(canonicalizeOrigin(input), want, input);
  });

  it('originGuardWarning: only for a non-loopback bind without allowed origins', () => {
    assert.equal(originGuardWarning({ host: '127.0.0.1', port: 8080 }), undefined);
    assert.equal(originGuardWarning({ host: '0.0.0.0', port: 8080, allowedOrigins: ['https://a.example'] }), undefined);
    const w = originGuardWarning({ host: '0.0.0.0', port: 8080 });
    assert.match(w ?? '', /Origin validation disabled/);
    assert.match(w ?? '', /--allowed-origins/);
    assert.match(originGuardWarning({ host: '0.0.0.0', port: 8080, allowedHosts: ['mcp.example'] }) ?? '', /Origin validation disabled/);
  });

  it('originGuard: undefined when neither check applies', () => {
    assert.equal(originGuard({ host: '0.0.0.0', port: 8080 }), undefined);
    assert.equal(originGuard({ host: '0.0.0.0', port: 8080, allowedOrigins: [], allowedHosts: [] }), undefined);
    assert.equal(originGuard({ host: '127.0.0.1', port: 8080 })?.name, 'origin');
    assert.equal(originGuard({ host: '0.0.0.0', port: 8080, allowedHosts: ['mcp.example'] })?.name, 'origin');
    assert.equal(originGuard({ host: '0.0.0.0', port: 8080, allowedOrigins: ['https://a.example'] })?.name, 'origin');
  });

  it('originGuard: refuses malformed allowed hosts', () => {
    assert.throws(() => originGuard({ host: '127.0.0.1', port: 1, allowedHosts: ['user@evil'] }), /invalid allowed host/);
    assert.throws(() => originGuard({ host: '127.0.0.1', port: 1, allowedHosts: ['*.example.com'] }), /invalid allowed host/);
  });
});

describe('originGuard on a loopback bind (defaults)', () => {
  const h = withGuard((port) => ({ host: '127.0.0.1', port }));
  const host = (): string => `127.0.0.1:${guardPort(h())}`;

  it('no Origin: allowed and forwarded', async () => {
    const before = h().forwarded.length;
    const r = await post(h(), { host: host() });
    assert.equal(r.status, 200);
    assert.equal(h().forwarded.length, before + 1);
  });

  for (const o of ['http://localhost:{P}', 'http://127.0.0.1:{P}', 'http://[::1]:{P}', 'HTTP://LOCALHOST:{P}', 'http://LocalHost:{P}', 'http://[0:0::1]:{P}']) {
    it(`allowed Origin ${o}`, async () => {
      const r = await post(h(), { host: host(), origin: o.replace('{P}', String(guardPort(h()))) });
      assert.equal(r.status, 200);
      assert.deepEqual((r.json as { result: unknown }).result, { echo: PING });
    });
  }

  for (const o of [
    'http://evil.com',
    'http://localhost', // no port
    'http://localhost:1', // other port
    'https://localhost:{P}', // other scheme
    'http://localhost:0{P}', // port as written differs
    'http://user@localhost:{P}', // userinfo never matches
    'http://user:pw@127.0.0.1:{P}',
    'null',
    'http://127.0.0.2:{P}', // not in the default list
    'http://[::2]:{P}',
    'http://localhost.:{P}',
  ]) {
    it(`disallowed Origin ${o}: 403 with ToolHive's body, not forwarded`, async () => {
      const before = h().forwarded.length;
      const r = await post(h(), { host: host(), origin: o.replace('{P}', String(guardPort(h()))) });
      assert.equal(r.status, 403);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.text, ORIGIN_BODY);
      assert.equal(h().forwarded.length, before);
    });
  }

  it('two Origin headers: 403 even when both are allowed', async () => {
    const o = `http://localhost:${guardPort(h())}`;
    const r = await post(h(), { host: host(), origin: [o, o] });
    assert.equal(r.status, 403);
    assert.equal(r.text, ORIGIN_BODY);
  });

  it('an empty Origin counts as none', async () => {
    const r = await post(h(), { host: host(), origin: '' });
    assert.equal(r.status, 200);
  });

  it('GET requests are checked too', async () => {
    const r = await h().request({ method: 'GET', headers: { host: host(), origin: 'http://evil.com' } });
    assert.equal(r.status, 403);
  });

  for (const hv of ['localhost:{P}', '127.0.0.1:{P}', '[::1]:{P}', 'LOCALHOST:{P}', 'localhost', '127.0.0.1', '[::1]', 'localhost:1234', '127.5.6.7:{P}', '[0:0:0:0:0:0:0:1]:{P}']) {
    it(`Host ${hv}: allowed`, async () => {
      const r = await post(h(), { host: hv.replace('{P}', String(guardPort(h()))) });
      assert.equal(r.status, 200);
    });
  }

  for (const hv of [
    'evil.com',
    'evil.com:{P}',
    'localhost.evil.com:{P}',
    '127.0.0.1.nip.io:{P}',
    'localhost.:{P}',
    'evil@localhost:{P}',
    '[::2]:{P}',
    '::1',
    '0.0.0.0:{P}',
    '127.1:{P}',
    'localhost:abc',
    '[::1',
  ]) {
    it(`Host ${hv}: 403 "Invalid Host header", not forwarded`, async () => {
      const before = h().forwarded.length;
      const r = await post(h(), { host: hv.replace('{P}', String(guardPort(h()))) });
      assert.equal(r.status, 403);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.deepEqual(r.json, { jsonrpc: '2.0', error: { code: -32000, message: 'Invalid Host header' } });
      assert.equal(h().forwarded.length, before);
    });
  }

  it('an allowed Origin does not excuse a bad Host (rebinding with a spoofed-looking Origin is impossible, but both are checked)', async () => {
    const r = await post(h(), { host: 'evil.com', origin: `http://localhost:${guardPort(h())}` });
    assert.equal(r.status, 403);
    assert.deepEqual(r.json, { jsonrpc: '2.0', error: { code: -32000, message: 'Invalid Host header' } });
  });

  it('a missing Host (HTTP/1.0) is refused with 403', async () => {
    const reply = await h().raw('GET /mcp HTTP/1.0\r\n\r\n');
    assert.match(reply, /^HTTP\/1\.1 403 /);
    assert.match(reply, /"message":"Missing Host header"/);
  });

  it('two Host headers are refused with 400', async () => {
    const reply = await h().raw(`GET /mcp HTTP/1.1\r\nHost: localhost:${guardPort(h())}\r\nHost: evil.com\r\nConnection: close\r\n\r\n`);
    assert.match(reply, /^HTTP\/1\.1 400 /);
    assert.match(reply, /more than one Host header/);
  });
});

describe('originGuard on a loopback bind with allowedOrigins and allowedHosts', () => {
  const h = withGuard((port) => ({
    host: 'localhost',
    port,
    allowedOrigins: ['https://App.Example.com', 'http://[::1]:3000', 'not an origin'],
    allowedHosts: ['mcp.example.com', 'other.example:8443', '::1'],
  }));

  it('explicit origins replace the defaults', async () => {
    const p = guardPort(h());
    assert.equal((await post(h(), { host: 'localhost', origin: 'https://app.example.com' })).status, 200);
    assert.equal((await post(h(), { host: 'localhost', origin: 'HTTPS://APP.EXAMPLE.COM' })).status, 200);
    assert.equal((await post(h(), { host: 'localhost', origin: 'http://[::1]:3000' })).status, 200);
    assert.equal((await post(h(), { host: 'localhost', origin: `http://localhost:${p}` })).status, 403);
    assert.equal((await post(h(), { host: 'localhost', origin: 'not an origin' })).status, 403);
  });

  it('allowedHosts extend the loopback names', async () => {
    assert.equal((await post(h(), { host: 'localhost' })).status, 200);
    assert.equal((await post(h(), { host: 'MCP.example.com:9999' })).status, 200);
    assert.equal((await post(h(), { host: 'other.example:8443' })).status, 200);
    assert.equal((await post(h(), { host: 'other.example:8444' })).status, 403);
    assert.equal((await post(h(), { host: 'other.example' })).status, 403);
    assert.equal((await post(h(), { host: 'evil.com' })).status, 403);
  });
});

describe('originGuard on a non-loopback bind', () => {
  const originsOnly = withGuard((port) => ({ host: '0.0.0.0', port, allowedOrigins: ['https://app.example.com'] }));
  const hostsOnly = withGuard((port) => ({ host: '0.0.0.0', port, allowedHosts: ['mcp.example.com'] }));

  it('with allowedOrigins only: Origin checked, Host not checked', async () => {
    assert.equal((await post(originsOnly(), { host: 'anything.example' })).status, 200);
    assert.equal((await post(originsOnly(), { host: 'anything.example', origin: 'https://app.example.com' })).status, 200);
    assert.equal((await post(originsOnly(), { host: 'anything.example', origin: 'https://evil.example' })).status, 403);
  });

  it('with allowedHosts only: Host checked (no loopback names), Origin not checked', async () => {
    assert.equal((await post(hostsOnly(), { host: 'mcp.example.com' })).status, 200);
    assert.equal((await post(hostsOnly(), { host: 'mcp.example.com', origin: 'https://evil.example' })).status, 200);
    assert.equal((await post(hostsOnly(), { host: 'localhost' })).status, 403);
    assert.equal((await post(hostsOnly(), { host: '127.0.0.1' })).status, 403);
  });
});
