/**
 * Root spans recorded without the SDK's Span objects: the sampled requests to a stdio server. Such a
 * request has no caller trace context and passes none on (a stdio server gets no headers), so its span
 * is only ever exported: nothing reads its context while it runs. The telemetry stage hands over the
 * finished span's facts; ids are drawn per batch, and batches go to the OTLP exporter like the
 * BatchSpanProcessor's (at most MAX_BATCH spans, at least every EXPORT_DELAY_MS). A full batch leaves
 * at once, so at most one batch waits here; the exporter bounds what is in flight (it fails exports
 * past its concurrency limit, as it does for the processor's). Measured: a sampled span through the SDK (span object, attribute checks, batch processor)
 * cost several times its encoding (docs/observability.md).
 */
import { randomFillSync } from 'node:crypto';
import { SpanKind, TraceFlags, type Attributes, type HrTime, type SpanContext, type SpanStatus } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { EncodableSpan } from './otlp-trace-encoding.js';

const MAX_BATCH = 512;
const EXPORT_DELAY_MS = 1000;

export interface RootSpanExporter {
  export(spans: EncodableSpan[], resultCallback: (result: ExportResult) => void): void;
}

class RecordedRootSpan implements EncodableSpan {
  readonly kind = SpanKind.SERVER;
  readonly parentSpanContext = undefined;
  readonly events = [];
  readonly links = [];
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  /** Set when the batch is exported (see RootSpanRecorder.export). */
  context: SpanContext | undefined;

  constructor(
    readonly name: string,
    readonly startTime: HrTime,
    readonly endTime: HrTime,
    readonly attributes: Attributes,
    readonly status: SpanStatus,
    readonly resource: EncodableSpan['resource'],
    readonly instrumentationScope: EncodableSpan['instrumentationScope'],
  ) {}

  spanContext(): SpanContext {
    return this.context!;
  }
}

export class RootSpanRecorder {
  private queue: RecordedRootSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly exporter: RootSpanExporter,
    private readonly resource: EncodableSpan['resource'],
    private readonly scope: EncodableSpan['instrumentationScope'],
  ) {}

  /** A finished root span; `attributes` becomes the span's (the caller must not change it afterwards). */
  record(name: string, startTime: HrTime, endTime: HrTime, attributes: Attributes, status: SpanStatus): void {
    if (this.stopped) return;
    this.queue.push(new RecordedRootSpan(name, startTime, endTime, attributes, status, this.resource, this.scope));
    if (this.queue.length >= MAX_BATCH) this.export();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.export(), EXPORT_DELAY_MS);
      this.timer.unref();
    }
  }

  /** Exports what is queued and waits for every export in flight. */
  async forceFlush(): Promise<void> {
    this.export();
    await Promise.all([...this.inFlight]);
  }

  async shutdown(): Promise<void> {
    await this.forceFlush();
    this.stopped = true;
  }

  private export(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    assignIds(batch);
    const done = new Promise<void>((resolve) => this.exporter.export(batch, () => resolve()));
    this.inFlight.add(done);
    void done.then(() => this.inFlight.delete(done));
  }
}

/** Random trace (16 bytes) and span (8 bytes) ids for a whole batch from one draw; never all zero. */
function assignIds(batch: RecordedRootSpan[]): void {
  const bytes = randomFillSync(Buffer.allocUnsafe(batch.length * 24));
  for (let i = 0; i < batch.length; i++) {
    const at = i * 24;
    // An all-zero id is invalid in W3C trace context; the chance is 2^-64 or less, but it costs one check.
    if (bytes.readBigUInt64LE(at) === 0n && bytes.readBigUInt64LE(at + 8) === 0n) bytes[at] = 1;
    if (bytes.readBigUInt64LE(at + 16) === 0n) bytes[at + 16] = 1;
    batch[i]!.context = {
      traceId: bytes.toString('hex', at, at + 16),
      spanId: bytes.toString('hex', at + 16, at + 24),
      traceFlags: TraceFlags.SAMPLED,
    };
  }
}
