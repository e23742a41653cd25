import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyRequestPatch, PatchError } from '../../src/telemetry/webhooks/patch.js';
import { signature } from '../../src/telemetry/webhooks/client.js';
import { parseWebhook } from '../../src/telemetry/webhooks/config.js';
import { isThvError } from '../../src/errors.js';

const req = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a', arguments: { x: 1, list: [1, 2] } } };

describe('webhook JSON Patch', () => {
  it('applies RFC 6902 operations inside /mcp_request/ without touching the input', () => {
    const out = applyRequestPatch(req, [
      { op: 'test', path: '/mcp_request/params/name', value: 'a' },
      { op: 'replace', path: '/mcp_request/params/name', value: 'b' },
      { op: 'add', path: '/mcp_request/params/arguments/y', value: { z: true } },
      { op: 'remove', path: '/mcp_request/params/arguments/x' },
      { op: 'add', path: '/mcp_request/params/arguments/list/-', value: 3 },
      { op: 'copy', from: '/mcp_request/params/name', path: '/mcp_request/params/arguments/copied' },
      { op: 'move', from: '/mcp_request/params/arguments/copied', path: '/mcp_request/params/arguments/moved' },
    ]) as typeof req;
    assert.deepEqual(out.params, { name: 'b', arguments: { list: [1, 2, 3], y: { z: true }, moved: 'b' } });
    assert.equal(req.params.name, 'a');
  });
  it('refuses operations outside the request, unknown operations and failed tests', () => {
    assert.throws(() => applyRequestPatch(req, [{ op: 'add', path: '/principal/sub', value: 'x' }]), PatchError);
    assert.throws(() => applyRequestPatch(req, [{ op: 'replace', path: '/mcp_request', value: {} }]), PatchError);
    assert.throws(() => applyRequestPatch(req, [{ op: 'copy', from: '/context/server_name', path: '/mcp_request/x' }]), PatchError);
    assert.throws(() => applyRequestPatch(req, [{ op: 'merge', path: '/mcp_request/x', value: 1 }]), PatchError);
    assert.throws(() => applyRequestPatch(req, [{ op: 'test', path: '/mcp_request/id', value: 2 }]), PatchError);
    assert.throws(() => applyRequestPatch(req, [{ op: 'remove', path: '/mcp_request/params/nope' }]), PatchError);
    assert.throws(() => applyRequestPatch(req, { op: 'add' }), PatchError);
  });
});

describe('webhook signatures and configuration', () => {
  it('signs "<timestamp>.<body>" with HMAC-SHA256', () => {
    // echo -n '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret
    assert.equal(signature('secret', '1700000000', '{"a":1}'), 'sha256=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686');
    assert.match(signature('secret', '1', 'x'), /^sha256=[0-9a-f]{64}$/);
  });
  it('validates timeouts, policies and schemes', () => {
    const base = { name: 'h', url: 'https://127.0.0.1/x', failure_policy: 'fail' };
    assert.equal(parseWebhook(base).timeoutMs, 10_000);
    assert.equal(parseWebhook({ ...base, timeout: 5_000_000_000 }).timeoutMs, 5_000);
    assert.equal(parseWebhook({ ...base, timeout: '2s' }).timeoutMs, 2_000);
    assert.throws(() => parseWebhook({ ...base, timeout: '31s' }), (e) => isThvError(e));
    assert.throws(() => parseWebhook({ ...base, failure_policy: 'maybe' }), (e) => isThvError(e));
    assert.throws(() => parseWebhook({ ...base, url: 'http://127.0.0.1/x' }), (e) => isThvError(e));
    assert.equal(parseWebhook({ ...base, url: 'http://127.0.0.1/x', tls_config: { insecure_skip_verify: true } }).url, 'http://127.0.0.1/x');
  });
});
