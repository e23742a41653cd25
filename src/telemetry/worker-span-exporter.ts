/**
 * A SpanExporter that hands finished spans to OpenTelemetry's OTLP/HTTP exporter running on a worker
 * thread. Turning spans into OTLP protobuf took more of the proxy's thread than recording them did
 * (measured in the bridge benchmark at sampling 1.0: transformer and protobuf 9% of the proxy's time,
 * the span SDK 6%); on its own thread that work no longer delays requests. Here each span only becomes
 * a plain record, which the thread boundary copies natively.
 */
import { Worker } from 'node:worker_threads';
import type { Attributes } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../logging.js';
import type { ExporterWorkerData, FromExporter, SpanRecord, ToExporter } from './span-export-protocol.js';

/** Run from source (tests under tsx) the worker's entry is TypeScript, which a new thread loads through tsx. */
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(FROM_SOURCE ? './span-export-worker.ts' : './span-export-worker.js', import.meta.url);

function startWorker(workerData: ExporterWorkerData): Worker {
  if (!FROM_SOURCE) return new Worker(WORKER_URL, { workerData });
  const code = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`;
  return new Worker(code, { eval: true, workerData });
}

export class WorkerSpanExporter implements SpanExporter {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly waiting = new Map<number, (m: FromExporter | undefined) => void>();
  private failed: string | undefined;
  private stopped = false;

  /** The resource whose attributes the thread has. */
  private sentResource: ReadableSpan['resource'] | undefined;

  constructor(options: { url: string; headers: Record<string, string>; logger: Logger }) {
    const workerData: ExporterWorkerData = { url: options.url, headers: options.headers };
    this.worker = startWorker(workerData);
    // Only an export in flight keeps the process alive (see send).
    this.worker.unref();
    this.worker.on('message', (m: FromExporter) => this.settle(m.id, m));
    const fail = (why: string): void => {
      if (this.failed === undefined && !this.stopped) options.logger.warn({ err: why }, 'the OTLP trace exporter thread stopped; spans are no longer exported');
      this.failed ??= why;
      for (const id of [...this.waiting.keys()]) this.settle(id, undefined);
    };
    this.worker.on('error', (err) => fail(err.message));
    this.worker.on('exit', (code) => fail(`exited with code ${code}`));
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.failed !== undefined) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error(`OTLP exporter thread: ${this.failed}`) });
      return;
    }
    const id = this.nextId++;
    // One provider, one resource: its attributes cross once.
    const res = spans[0]?.resource;
    let resource: Attributes | undefined;
    if (res !== undefined && res !== this.sentResource) {
      resource = res.attributes;
      this.sentResource = res;
    }
    this.send({ type: 'export', id, spans: spans.map(toRecord), ...(resource === undefined ? {} : { resource }) }, id, (m) => {
      if (m?.type === 'exported' && m.code === ExportResultCode.SUCCESS) resultCallback({ code: ExportResultCode.SUCCESS });
      else resultCallback({ code: ExportResultCode.FAILED, error: new Error(m?.type === 'exported' ? (m.error ?? 'export failed') : (this.failed ?? 'export failed')) });
    });
  }

  forceFlush(): Promise<void> {
    return this.request('flush');
  }

  async shutdown(): Promise<void> {
    if (this.stopped) return;
    await this.request('shutdown');
    this.stopped = true;
    await this.worker.terminate();
  }

  private request(type: 'flush' | 'shutdown'): Promise<void> {
    if (this.failed !== undefined) return Promise.resolve();
    const id = this.nextId++;
    return new Promise((resolve) => this.send({ type, id }, id, () => resolve()));
  }

  private send(msg: ToExporter, id: number, onReply: (m: FromExporter | undefined) => void): void {
    if (this.waiting.size === 0) this.worker.ref();
    this.waiting.set(id, onReply);
    this.worker.postMessage(msg);
  }

  private settle(id: number, m: FromExporter | undefined): void {
    const onReply = this.waiting.get(id);
    if (onReply === undefined) return;
    this.waiting.delete(id);
    if (this.waiting.size === 0) this.worker.unref();
    onReply(m);
  }
}

function toRecord(s: ReadableSpan): SpanRecord {
  const ctx = s.spanContext();
  const parent = s.parentSpanContext;
  return {
    name: s.name,
    kind: s.kind,
    traceId: ctx.traceId,
    spanId: ctx.spanId,
    traceFlags: ctx.traceFlags,
    traceState: ctx.traceState?.serialize(),
    parentSpanId: parent?.spanId,
    parentIsRemote: parent?.isRemote,
    startTime: s.startTime,
    endTime: s.endTime,
    duration: s.duration,
    status: s.status,
    attributes: s.attributes,
    events: s.events.map((e) => ({ name: e.name, time: e.time, attributes: e.attributes, droppedAttributesCount: e.droppedAttributesCount })),
    links: s.links.map((l) => ({
      context: { traceId: l.context.traceId, spanId: l.context.spanId, traceFlags: l.context.traceFlags, isRemote: l.context.isRemote, traceState: l.context.traceState?.serialize() },
      attributes: l.attributes,
      droppedAttributesCount: l.droppedAttributesCount,
    })),
    scope: { name: s.instrumentationScope.name, version: s.instrumentationScope.version, schemaUrl: s.instrumentationScope.schemaUrl },
    droppedAttributesCount: s.droppedAttributesCount,
    droppedEventsCount: s.droppedEventsCount,
    droppedLinksCount: s.droppedLinksCount,
  };
}
