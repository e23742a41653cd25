/**
 * The hand-written OTLP trace encoding (src/telemetry/otlp-trace-encoding.ts) against OpenTelemetry's
 * own: both requests decoded with OpenTelemetry's generated protobuf messages must be equal, for spans
 * that use every field. Then the exporter and the root-span recorder against a real OTLP/HTTP receiver.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, describe, it } from 'node:test';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace, type Attributes } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { encodeTraceRequest } from '../../src/telemetry/otlp-trace-encoding.js';
import { OtlpTraceExporter } from '../../src/telemetry/otlp-trace-exporter.js';
import { RootSpanRecorder } from '../../src/telemetry/root-span-recorder.js';
import { freePort } from '../../src/proxy/net.js';
import { startOtlpReceiver } from './otlp-receiver.js';

const require = createRequire(import.meta.url);
interface Decoder {
  decode(buf: Uint8Array): unknown;
  toObject(msg: unknown, opts: Record<string, unknown>): Record<string, unknown>;
}
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: Decoder } } } } };
};
const REQUEST = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
// Defaults filled in: a field written as its default value and one left out decode alike.
const decoded = (bytes: Uint8Array): Record<string, unknown> =>
  REQUEST.toObject(REQUEST.decode(bytes), { longs: String, bytes: String, enums: String, defaults: true, arrays: true, objects: true });

function collectingProvider(resource: Attributes): { provider: BasicTracerProvider; ended: ReadableSpan[] } {
  const ended: ReadableSpan[] = [];
  const processor: SpanProcessor = { onStart: () => {}, onEnd: (s) => ended.push(s), forceFlush: async () => {}, shutdown: async () => {} };
  return { provider: new BasicTracerProvider({ resource: resourceFromAttributes(resource), spanProcessors: [processor] }), ended };
}

const LONG = 'x'.repeat(200);
const VERY_LONG = 'é'.repeat(20_000); // two bytes each: a length of three varint bytes, moved into place

describe('OTLP trace encoding', () => {
  it('decodes exactly as OpenTelemetry’s own serializer’s output, for spans using every field', () => {
    const a = collectingProvider({ 'service.name': 'thv-a', 'process.pid': 42, ratio: 0.5, 'deployment.tags': ['x', 'y'] });
    const b = collectingProvider({ 'service.name': 'thv-b' });
    const tracer = a.provider.getTracer('github.com/stacklok/toolhive/pkg/telemetry', '1.2.3');
    const other = a.provider.getTracer('other-scope', undefined, { schemaUrl: 'https://opentelemetry.io/schemas/1.30.0' });

    const remote = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
      traceState: undefined,
    });
    const parent = tracer.startSpan('tools/call echo', {
      kind: SpanKind.SERVER,
      attributes: {
        'mcp.method.name': 'tools/call',
        'http.response.status_code': 200,
        'client.port': 65535,
        negative: -7,
        big: 2 ** 53 - 1,
        fraction: 0.125,
        ok: true,
        no: false,
        names: ['a', 'b'],
        counts: [1, 2, 3],
        mixed: [1.5, -2.25],
        unicode: 'grüße — 日本 🚀',
        long: LONG,
        veryLong: VERY_LONG,
        empty: '',
      },
    }, remote);
    parent.addEvent('first', { 'event.n': 1 });
    parent.addEvent('second');
    parent.setStatus({ code: SpanStatusCode.ERROR, message: 'HTTP 502' });
    const child = tracer.startSpan('child', {
      kind: SpanKind.CLIENT,
      links: [{ context: { traceId: '11111111111111111111111111111111', spanId: '2222222222222222', traceFlags: 0, isRemote: true }, attributes: { why: 'follows' } }],
    }, trace.setSpan(ROOT_CONTEXT, parent));
    child.setStatus({ code: SpanStatusCode.OK });
    child.end();
    parent.end();
    other.startSpan('internal').end();
    b.provider.getTracer('github.com/stacklok/toolhive/pkg/telemetry', '1.2.3').startSpan('from b', { kind: SpanKind.PRODUCER }).end();

    const spans = [...a.ended, ...b.ended];
    assert.equal(spans.length, 4);
    const ours = decoded(encodeTraceRequest(spans));
    assert.deepEqual(ours, decoded(ProtobufTraceSerializer.serializeRequest(spans)!));
    // Two resources, the first with two scopes.
    const resourceSpans = ours.resourceSpans as Array<{ scopeSpans: unknown[] }>;
    assert.equal(resourceSpans.length, 2);
    assert.equal(resourceSpans[0]!.scopeSpans.length, 2);
  });

  it('encodes an empty batch as an empty request', () => {
    assert.deepEqual(decoded(encodeTraceRequest([])), decoded(ProtobufTraceSerializer.serializeRequest([])!));
  });
});

describe('OtlpTraceExporter and RootSpanRecorder against a real OTLP/HTTP receiver', () => {
  const closers: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of closers) await c();
  });
  const exportOnce = (exporter: OtlpTraceExporter, spans: ReadableSpan[]): Promise<ExportResult> => new Promise((resolve) => exporter.export(spans, resolve));

  it('sends spans with their headers; the receiver decodes them as recorded', async () => {
    const receiver = await startOtlpReceiver();
    closers.push(() => receiver.close());
    const exporter = new OtlpTraceExporter({ url: `${receiver.url}/v1/traces`, headers: { 'x-test': 'yes' } });
    const { provider, ended } = collectingProvider({ 'service.name': 'thv-exporter-test' });
    const tracer = provider.getTracer('github.com/stacklok/toolhive/pkg/telemetry', '1.2.3');
    const parent = tracer.startSpan('parent', { kind: SpanKind.SERVER });
    const child = tracer.startSpan('tools/call echo', { kind: SpanKind.SERVER, attributes: { 'mcp.method.name': 'tools/call', 'http.response.status_code': 200 } }, trace.setSpan(ROOT_CONTEXT, parent));
    child.setStatus({ code: SpanStatusCode.ERROR, message: 'HTTP 502' });
    child.end();
    parent.end();

    assert.equal((await exportOnce(exporter, ended)).code, ExportResultCode.SUCCESS);
    await exporter.shutdown();
    const got = receiver.spans.find((s) => s.name === 'tools/call echo')!;
    assert.equal(got.attributes['http.response.status_code'], 200);
    assert.equal(got.kind, 'SPAN_KIND_SERVER');
    assert.equal(got.status?.code, 'STATUS_CODE_ERROR');
    assert.equal(got.parentSpanId, parent.spanContext().spanId);
    assert.equal(got.resource['service.name'], 'thv-exporter-test');
    assert.equal(got.scope, 'github.com/stacklok/toolhive/pkg/telemetry');
    assert.equal(receiver.headers.at(-1)?.['x-test'], 'yes');
    assert.equal(receiver.headers.at(-1)?.['content-type'], 'application/x-protobuf');
  });

  it('fails an export to a collector that is not there, without throwing', async () => {
    const port = await freePort();
    const exporter = new OtlpTraceExporter({ url: `http://127.0.0.1:${port}/v1/traces`, headers: {} });
    const { provider, ended } = collectingProvider({ 'service.name': 'lost' });
    provider.getTracer('t').startSpan('lost').end();
    assert.equal((await exportOnce(exporter, ended)).code, ExportResultCode.FAILED);
    await exporter.shutdown();
  });

  it('the recorder batches root spans with fresh ids and sends what is left on shutdown', async () => {
    const receiver = await startOtlpReceiver();
    closers.push(() => receiver.close());
    const exporter = new OtlpTraceExporter({ url: `${receiver.url}/v1/traces`, headers: {} });
    const resource = resourceFromAttributes({ 'service.name': 'thv-recorder-test' });
    const recorder = new RootSpanRecorder(exporter, resource, { name: 'github.com/stacklok/toolhive/pkg/telemetry', version: '9.9.9' });
    const start: [number, number] = [1_764_000_000, 5];
    const end: [number, number] = [1_764_000_001, 999_999_999];
    // 512 fill one batch, sent at once; 3 more wait for the timer or the shutdown.
    for (let i = 0; i < 515; i++) recorder.record('tools/call echo', start, end, { 'jsonrpc.request.id': String(i) }, { code: SpanStatusCode.OK });
    await recorder.shutdown();
    await exporter.shutdown();
    recorder.record('after shutdown', start, end, {}, { code: SpanStatusCode.OK });

    assert.equal(receiver.spans.length, 515);
    assert.equal(receiver.headers.length, 2, 'one full batch at once, the rest on shutdown');
    const ids = new Set(receiver.spans.map((s) => s.spanId));
    const traces = new Set(receiver.spans.map((s) => s.traceId));
    assert.equal(ids.size, 515, 'every span has its own id');
    assert.equal(traces.size, 515, 'every root span starts its own trace');
    for (const s of receiver.spans) {
      assert.match(s.traceId, /^[0-9a-f]{32}$/);
      assert.match(s.spanId, /^[0-9a-f]{16}$/);
      assert.equal(s.parentSpanId ?? '', '');
      assert.equal(s.kind, 'SPAN_KIND_SERVER');
      assert.equal(s.status?.code, 'STATUS_CODE_OK');
      assert.equal(s.resource['service.name'], 'thv-recorder-test');
      assert.equal(s.scope, 'github.com/stacklok/toolhive/pkg/telemetry');
    }
    assert.deepEqual(
      receiver.spans.map((s) => Number(s.attributes['jsonrpc.request.id'])).sort((x, y) => x - y),
      Array.from({ length: 515 }, (_, i) => i),
    );
  });
});
