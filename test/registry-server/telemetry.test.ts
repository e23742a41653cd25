/**
 * The `telemetry` block of thv-registry-api (issue 9 asks for it on the registry too): `/metrics` on
 * the internal server only, with the reference's instrument names and bounded route labels; spans and
 * metrics reach a real OTLP/HTTP receiver; without the block there is no `/metrics` anywhere. Also
 * `/readiness`, which follows the database while `/health` does not.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningRegistry } from '../../src/registry-server/server.js';
import { startOtlpReceiver, type OtlpReceiver } from '../telemetry/otlp-receiver.js';
import { createTestDatabase, getJson, makeServers, registryDocument, startInProcess, until, type TestDatabase } from './helpers.js';

/** The value of one Prometheus sample, matched by name and exact label set. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const kv of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) if (kv[1] !== 'otel_scope_name') got[kv[1]!] = kv[2]!;
    if (Object.entries(labels).every(([k, v]) => got[k] === v) && Object.keys(got).length === Object.keys(labels).length) return Number(m[3]);
  }
  return undefined;
}

describe('registry telemetry', () => {
  let dir: string;
  let tdb: TestDatabase;
  let otlp: OtlpReceiver;
  let reg: RunningRegistry | undefined;
  let plain: RunningRegistry;
  const sources = (dirName: string) =>
    `sources:\n  - name: catalog\n    file: { path: ${join(dirName, 'r.json')} }\n    syncPolicy: { interval: 1h }\nregistries:\n  - name: default\n    sources: [catalog]\nauth: { mode: anonymous }\n`;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'thv-rs-telemetry-'));
    tdb = await createTestDatabase();
    otlp = await startOtlpReceiver();
    writeFileSync(join(dir, 'r.json'), registryDocument(makeServers(3)));
    reg = await startInProcess(
      `${sources(dir)}telemetry:\n  enabled: true\n  serviceName: reg-under-test\n  endpoint: ${otlp.url}\n  insecure: true\n  tracing: { enabled: true, sampling: 1.0 }\n  metrics: { enabled: true }\n${tdb.yaml}`,
    );
    plain = await startInProcess(`${sources(dir)}${tdb.yaml}`, { noSync: true });
    await until('synced', async () => (await getJson(`${reg!.url}/registry/default/v0.1/servers`)).body?.metadata?.count === 3);
  });

  after(async () => {
    await reg?.close();
    await plain?.close();
    await otlp?.close();
    await tdb?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the reference metrics on the internal server, and only there', async () => {
    const r = reg!;
    const text0 = await (await fetch(`${r.internalUrl}/metrics`)).text();
    const base = sample(text0, 'thv_reg_srv_http_requests_total', { method: 'GET', route: '/registry/{registryName}/v0.1/servers', status_code: '200' }) ?? 0;
    for (let i = 0; i < 3; i++) assert.equal((await getJson(`${r.url}/registry/default/v0.1/servers`)).status, 200);
    assert.equal((await getJson(`${r.url}/registry/default/v0.1/servers/io.test%2Fserver-00001/versions`)).status, 200);
    assert.equal((await getJson(`${r.url}/registry/default/v0.1/servers/io.test%2Fnope/versions/1.0.0`)).status, 404);
    assert.equal((await getJson(`${r.url}/metrics`)).status, 404, 'never on the public port');

    const res = await fetch(`${r.internalUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    assert.equal(sample(text, 'thv_reg_srv_http_requests_total', { method: 'GET', route: '/registry/{registryName}/v0.1/servers', status_code: '200' }), base + 3);
    assert.equal(sample(text, 'thv_reg_srv_http_requests_total', { method: 'GET', route: '/registry/{registryName}/v0.1/servers/{serverName}/versions', status_code: '200' }), 1);
    assert.equal(sample(text, 'thv_reg_srv_http_requests_total', { method: 'GET', route: '/registry/{registryName}/v0.1/servers/{serverName}/versions/{version}', status_code: '404' }), 1);
    assert.equal(sample(text, 'thv_reg_srv_http_requests_total', { method: 'GET', route: 'unknown_route', status_code: '404' }), 1, 'the public /metrics probe');
    assert.ok(!/io\.test|server-0000/.test(text), 'server names never become label values');
    assert.ok((sample(text, 'thv_reg_srv_http_request_duration_seconds_count', { method: 'GET', route: '/registry/{registryName}/v0.1/servers', status_code: '200' }) ?? 0) >= 3);
    assert.equal(sample(text, 'thv_reg_srv_http_active_requests', {}), 0);
    assert.equal(sample(text, 'thv_reg_srv_sync_duration_seconds_count', { registry: 'catalog', success: 'true' }), 1);
    assert.equal(sample(text, 'thv_reg_srv_servers_total', { registry: 'catalog' }), 3);

    // No telemetry block: no /metrics on either server.
    assert.equal((await getJson(`${plain.internalUrl}/metrics`)).status, 404);
    assert.equal((await getJson(`${plain.internalUrl}/health`)).status, 200);
  });

  it('exports spans (joining the caller trace) and metrics over OTLP/HTTP', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = '00f067aa0ba902b7';
    const r = await getJson(`${reg!.url}/registry/default/v0.1/servers?limit=1`, { headers: { traceparent: `00-${traceId}-${parent}-01` } });
    assert.equal(r.status, 200);
    // Shutting down flushes both the span batch and a final metrics export.
    await reg!.close();
    reg = undefined;
    const span = otlp.spans.find((s) => s.traceId === traceId);
    assert.ok(span, `span of the traced request (got ${otlp.spans.map((s) => s.name).join(', ')})`);
    assert.equal(span.name, 'GET /registry/{registryName}/v0.1/servers');
    assert.equal(span.parentSpanId, parent);
    assert.equal(span.attributes['http.route'], '/registry/{registryName}/v0.1/servers');
    assert.equal(span.attributes['http.response.status_code'], 200);
    assert.equal(span.resource['service.name'], 'reg-under-test');
    const points = otlp.exports.at(-1) ?? [];
    const req = points.find((p) => p.metric === 'thv_reg_srv_http_requests_total' && p.attributes.route === '/registry/{registryName}/v0.1/servers' && p.attributes.status_code === '200');
    assert.ok(req && (req.value ?? 0) >= 5, `request counter exported (${JSON.stringify(req)})`);
    assert.ok(points.some((p) => p.metric === 'thv_reg_srv_sync_duration_seconds' && p.attributes.registry === 'catalog'));
  });

  it('readiness follows the database; health does not', async () => {
    assert.deepEqual((await getJson(`${plain.internalUrl}/readiness`)).body, { status: 'ready' });
    await tdb.drop();
    const r = await getJson(`${plain.internalUrl}/readiness`);
    assert.equal(r.status, 503);
    assert.deepEqual(r.body, { error: 'service not ready' });
    assert.equal((await getJson(`${plain.internalUrl}/health`)).status, 200);
    // The public API still answers, with a JSON error (the database is gone, the process is not).
    const list = await getJson(`${plain.url}/registry/default/v0.1/servers`);
    assert.equal(typeof list.body.error, 'string');
  });
});
