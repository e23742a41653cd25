/**
 * The span exporter thread (src/telemetry/worker-span-exporter.ts) against a real OTLP/HTTP receiver:
 * spans arrive decoded with their attributes, parent, status and resource; an unreachable collector
 * fails the export without throwing; shutdown waits for what is in flight.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SpanKind, SpanStatusCode, trace, ROOT_CONTEXT } from '@opentelemetry/api';
import { createLogger } from '../../src/logging.js';
import { WorkerSpanExporter } from '../../src/telemetry/worker-span-exporter.js';
import { freePort } from '../../src/proxy/net.js';
import { startOtlpReceiver } from './otlp-receiver.js';

/** Finished spans, collected so that the test hands them to the exporter itself. */
function collectingProvider(): { provider: BasicTracerProvider; ended: ReadableSpan[] } {
  const ended: ReadableSpan[] = [];
  const processor: SpanProcessor = {
    onStart: () => {},
    onEnd: (s) => ended.push(s),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'thv-worker-test' }), spanProcessors: [processor] });
  return { provider, ended };
}

const exportOnce = (exporter: WorkerSpanExporter, spans: ReadableSpan[]): Promise<ExportResult> =>
  new Promise((resolve) => exporter.export(spans, resolve));

describe('WorkerSpanExporter', () => {
  const closers: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of closers) await c();
  });

  it('sends spans to the collector from its own thread, decoded as they were recorded', async () => {
    const receiver = await startOtlpReceiver();
    closers.push(() => receiver.close());
    const exporter = new WorkerSpanExporter({ url: `${receiver.url}/v1/traces`, headers: { 'x-test': 'yes' }, logger: createLogger() });
    const { provider, ended } = collectingProvider();
    const tracer = provider.getTracer('github.com/stacklok/toolhive/pkg/telemetry', '1.2.3');
    const parent = tracer.startSpan('parent', { kind: SpanKind.SERVER });
    const child = tracer.startSpan('tools/call echo', { kind: SpanKind.SERVER, attributes: { 'mcp.method.name': 'tools/call', 'http.response.status_code': 200, ok: true } }, trace.setSpan(ROOT_CONTEXT, parent));
    child.setStatus({ code: SpanStatusCode.ERROR, message: 'HTTP 502' });
    child.end();
    parent.end();

    const result = await exportOnce(exporter, ended);
    assert.equal(result.code, ExportResultCode.SUCCESS);
    await exporter.shutdown();

    assert.equal(receiver.spans.length, 2);
    const got = receiver.spans.find((s) => s.name === 'tools/call echo')!;
    assert.equal(got.attributes['mcp.method.name'], 'tools/call');
    assert.equal(got.attributes['http.response.status_code'], 200);
    assert.equal(got.attributes.ok, true);
    assert.equal(got.kind, 'SPAN_KIND_SERVER');
    assert.equal(got.status?.code, 'STATUS_CODE_ERROR');
    assert.equal(got.traceId, parent.spanContext().traceId);
    assert.equal(got.parentSpanId, parent.spanContext().spanId);
    assert.equal(got.resource['service.name'], 'thv-worker-test');
    assert.equal(got.scope, 'github.com/stacklok/toolhive/pkg/telemetry');
    assert.equal(receiver.headers.at(-1)?.['x-test'], 'yes');
  });

  it('fails an export to a collector that is not there, without throwing', async () => {
    const port = await freePort();
    const exporter = new WorkerSpanExporter({ url: `http://127.0.0.1:${port}/v1/traces`, headers: {}, logger: createLogger() });
    const { provider, ended } = collectingProvider();
    provider.getTracer('t').startSpan('lost').end();
    const result = await exportOnce(exporter, ended);
    assert.equal(result.code, ExportResultCode.FAILED);
    await exporter.shutdown();
    // After shutdown nothing is left running, and a second shutdown is harmless.
    await exporter.shutdown();
  });
});
