/** Messages between WorkerSpanExporter and its thread (src/telemetry/span-export-worker.ts). */
import type { Attributes, SpanKind, SpanStatus } from '@opentelemetry/api';

export interface ExporterWorkerData {
  url: string;
  headers: Record<string, string>;
}

/** What the transformer reads of a finished span, as plain data that crosses threads. */
export interface SpanRecord {
  name: string;
  kind: SpanKind;
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState: string | undefined;
  parentSpanId: string | undefined;
  parentIsRemote: boolean | undefined;
  startTime: [number, number];
  endTime: [number, number];
  duration: [number, number];
  status: SpanStatus;
  attributes: Attributes;
  events: Array<{ name: string; time: [number, number]; attributes?: Attributes; droppedAttributesCount?: number }>;
  links: Array<{
    context: { traceId: string; spanId: string; traceFlags: number; isRemote?: boolean; traceState: string | undefined };
    attributes?: Attributes;
    droppedAttributesCount?: number;
  }>;
  scope: { name: string; version?: string; schemaUrl?: string };
  droppedAttributesCount: number;
  droppedEventsCount: number;
  droppedLinksCount: number;
}

export type ToExporter =
  /** `resource`: the spans' resource attributes, sent with the first batch and whenever they change. */
  | { type: 'export'; id: number; spans: SpanRecord[]; resource?: Attributes }
  | { type: 'flush'; id: number }
  | { type: 'shutdown'; id: number };

export type FromExporter =
  | { type: 'exported'; id: number; code: number; error: string | undefined }
  | { type: 'flushed'; id: number }
  | { type: 'stopped'; id: number };
