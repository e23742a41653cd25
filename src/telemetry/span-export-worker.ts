/**
 * The OTLP trace exporter, on its own thread (see WorkerSpanExporter). It receives finished spans as
 * plain records, gives them back the shape the OpenTelemetry transformer reads, and leaves encoding and
 * sending to OpenTelemetry's own OTLP/HTTP protobuf exporter.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { HrTime, SpanContext } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { SpanRecord, ToExporter, FromExporter, ExporterWorkerData } from './span-export-protocol.js';

const data = workerData as ExporterWorkerData;
const exporter = new OTLPTraceExporter({ url: data.url, headers: data.headers });
// One object for every span: the transformer groups spans by resource identity.
let resource: Resource = resourceFromAttributes({});
const port = parentPort!;

function traceState(serialized: string | undefined): SpanContext['traceState'] {
  return serialized === undefined ? undefined : ({ serialize: () => serialized } as SpanContext['traceState']);
}

function readable(r: SpanRecord): ReadableSpan {
  const ctx: SpanContext = { traceId: r.traceId, spanId: r.spanId, traceFlags: r.traceFlags, traceState: traceState(r.traceState) };
  return {
    name: r.name,
    kind: r.kind,
    spanContext: () => ctx,
    parentSpanContext: r.parentSpanId === undefined ? undefined : { traceId: r.traceId, spanId: r.parentSpanId, traceFlags: r.traceFlags, isRemote: r.parentIsRemote },
    startTime: r.startTime as HrTime,
    endTime: r.endTime as HrTime,
    duration: r.duration as HrTime,
    status: r.status,
    attributes: r.attributes,
    links: r.links.map((l) => ({ ...l, context: { ...l.context, traceState: traceState(l.context.traceState) } })),
    events: r.events as ReadableSpan['events'],
    ended: true,
    resource,
    instrumentationScope: r.scope,
    droppedAttributesCount: r.droppedAttributesCount,
    droppedEventsCount: r.droppedEventsCount,
    droppedLinksCount: r.droppedLinksCount,
  };
}

port.on('message', (msg: ToExporter) => {
  const reply = (m: FromExporter): void => port.postMessage(m);
  if (msg.type === 'export') {
    if (msg.resource !== undefined) resource = resourceFromAttributes(msg.resource);
    exporter.export(msg.spans.map(readable), (result) => reply({ type: 'exported', id: msg.id, code: result.code, error: result.error?.message }));
  } else if (msg.type === 'flush') {
    exporter.forceFlush().then(
      () => reply({ type: 'flushed', id: msg.id }),
      () => reply({ type: 'flushed', id: msg.id }),
    );
  } else {
    exporter.shutdown().then(
      () => reply({ type: 'stopped', id: msg.id }),
      () => reply({ type: 'stopped', id: msg.id }),
    );
  }
});
