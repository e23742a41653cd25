import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ECHO_SERVER, openSession, runThv, startThv } from '../helpers/thv.js';

describe('--host', () => {
  it('a hostname is bound as its first IPv4 address, and the URL names that address', async () => {
    const thv = await startThv(['run', '--runtime', 'process', '--foreground', '--host', 'localhost', ECHO_SERVER]);
    try {
      assert.match(thv.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      await openSession(thv.url);
    } finally {
      assert.equal(await thv.stop(), 0);
    }
  });

  it('a name that does not resolve, or an IPv6 address, stops with a usage error', async () => {
    const unresolved = await runThv(['run', '--runtime', 'process', '--foreground', '--host', 'no-such-host.invalid', ECHO_SERVER]);
    assert.equal(unresolved.code, 2);
    assert.match(unresolved.stderr, /--host: invalid host: no-such-host\.invalid/);
    const v6 = await runThv(['run', '--runtime', 'process', '--foreground', '--host', '::1', ECHO_SERVER]);
    assert.equal(v6.code, 2);
    assert.match(v6.stderr, /IPv6/);
  });
});
