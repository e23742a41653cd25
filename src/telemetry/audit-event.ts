/**
 * ToolHive's audit event (spec proxy-auth-authz §5), rendered as the one JSON line its slog handler
 * writes: `{"time","level":"AUDIT","msg":"audit_event","audit_id","type","logged_at","outcome",
 * "component","source","subjects","delegation"?,"target","metadata":{"extra"},"data"?}`.
 */
import { randomUUID } from 'node:crypto';
import type { Identity } from '../auth/identity.js';

export type AuditOutcome = 'success' | 'denied' | 'failure' | 'error' | 'application_error';

const TYPE_BY_METHOD: Readonly<Record<string, string>> = {
  initialize: 'mcp_initialize',
  'tools/call': 'mcp_tool_call',
  'tools/list': 'mcp_tools_list',
  'resources/read': 'mcp_resource_read',
  'resources/list': 'mcp_resources_list',
  'prompts/get': 'mcp_prompt_get',
  'prompts/list': 'mcp_prompts_list',
  'notifications/message': 'mcp_notification',
  ping: 'mcp_ping',
  'logging/setLevel': 'mcp_logging',
  'completion/complete': 'mcp_completion',
  'notifications/roots/list_changed': 'mcp_roots_list_changed',
};

/**
 * The event type. `method` is the parsed MCP method (undefined when the request was not parsed);
 * `sseTransport` is true for the legacy SSE transport, where a GET opens the event stream.
 */
export function auditEventType(method: string | undefined, httpMethod: string, sseTransport: boolean): string {
  if (method !== undefined) return TYPE_BY_METHOD[method] ?? 'mcp_request';
  if (sseTransport) return httpMethod === 'GET' ? 'sse_connection' : 'mcp_request';
  return 'http_request';
}

/** 2xx success, 401/403 denied, other 4xx failure, 5xx error (spec §5). */
export function auditOutcome(status: number): AuditOutcome {
  if (status >= 200 && status < 300) return 'success';
  if (status === 401 || status === 403) return 'denied';
  if (status >= 400 && status < 500) return 'failure';
  if (status >= 500) return 'error';
  return 'success';
}

export function targetType(method: string | undefined): string {
  switch (method) {
    case 'tools/call':
      return 'tool';
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return 'resource';
    case 'prompts/get':
      return 'prompt';
    default:
      return 'endpoint';
  }
}

const subjectsCache = new WeakMap<Identity, Record<string, string>>();

/**
 * `subjects`: who, from the identity's claims; "anonymous" when nobody was authenticated. Identities are
 * reused across requests (the local user, cached tokens), so the answer is kept per identity object.
 */
export function auditSubjects(identity: Identity | undefined): Record<string, string> {
  if (identity === undefined) return computeSubjects(undefined);
  let s = subjectsCache.get(identity);
  if (s === undefined) {
    s = computeSubjects(identity);
    subjectsCache.set(identity, s);
  }
  return s;
}

function computeSubjects(identity: Identity | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (identity === undefined) {
    out.user = 'anonymous';
    return out;
  }
  const c = identity.claims;
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  const sub = str(c.sub) ?? str(identity.subject);
  if (sub !== undefined) out.user_id = sub;
  out.user = str(c.name) ?? str(identity.name) ?? str(c.preferred_username) ?? str(c.email) ?? str(identity.email) ?? 'anonymous';
  const clientName = str(c.client_name);
  const clientVersion = str(c.client_version);
  if (clientName !== undefined) out.client_name = clientName;
  if (clientVersion !== undefined) out.client_version = clientVersion;
  return out;
}

/** The RFC 8693 `act` chain (who acts for whom), or undefined without one. */
export function auditDelegation(claims: Record<string, unknown> | undefined, maxDepth: number): Record<string, unknown> | undefined {
  let act = claims?.act;
  if (act === undefined || act === null) return undefined;
  const chain: Array<Record<string, string>> = [];
  while (act !== undefined && act !== null) {
    if (typeof act !== 'object' || Array.isArray(act)) {
      return { chain, malformed: true, malformedReason: 'act claim is not a JSON object' };
    }
    if (chain.length >= maxDepth) {
      let omitted = 0;
      for (let a: unknown = act; a !== null && typeof a === 'object'; a = (a as { act?: unknown }).act) omitted++;
      return { chain, truncated: true, omitted };
    }
    const entry: Record<string, string> = {};
    for (const key of ['iss', 'sub', 'client_id']) {
      const v = (act as Record<string, unknown>)[key];
      if (typeof v === 'string') entry[key] = v;
    }
    chain.push(entry);
    act = (act as { act?: unknown }).act;
  }
  return { chain };
}

/**
 * The parts of one event, each already JSON text (see the builders below): most of them repeat from
 * request to request, so the audit stage keeps their texts instead of serialising objects each time.
 */
export interface AuditLineParts {
  /** One of the event type names above (our own constants: plain ASCII, written unescaped). */
  type: string;
  outcome: AuditOutcome;
  component: string;
  source: string;
  subjects: string;
  delegation?: string;
  target: string;
  extra: string;
  data?: string;
  /** When the event happened (ms since the epoch); rendering may come later, in the sink's batch. */
  at?: number;
}

/** What an audit sink queues: a rendered line, or the parts of one, rendered when its batch is written. */
export type AuditEntry = string | AuditLineParts;

/**
 * The line of a queued entry. Rendering a whole batch at once, away from the request, costs less than
 * rendering each event on its request (measured in the bridge benchmark).
 */
export function auditEntryText(entry: AuditEntry): string {
  return typeof entry === 'string' ? entry : renderAuditLine(entry);
}

/**
 * One audit line (no trailing newline): the same bytes as `JSON.stringify` of the event object (a test
 * holds it to that), written as literal text around the parts. Per request this was the largest part
 * of the audit cost (measured); the timestamp is formatted once per millisecond.
 */
export function renderAuditLine(p: AuditLineParts, now?: Date): string {
  const at = now === undefined ? isoAt(p.at ?? Date.now()) : JSON.stringify(now.toISOString());
  let line =
    `{"time":${at},"level":"AUDIT","msg":"audit_event","audit_id":"${randomUUID()}","type":"${p.type}",` +
    `"logged_at":${at},"outcome":"${p.outcome}","component":${p.component},"source":${p.source},"subjects":${p.subjects}`;
  if (p.delegation !== undefined) line += `,"delegation":${p.delegation}`;
  line += `,"target":${p.target},"metadata":{"extra":${p.extra}}`;
  if (p.data !== undefined) line += `,"data":${p.data}`;
  return `${line}}`;
}

/** `source`: the caller's network address, with its user agent and request id when it sent them. */
export function auditSourceJson(ip: string, extra: Record<string, string>): string {
  return `{"type":"network","value":${JSON.stringify(ip)},"extra":${JSON.stringify(extra)}}`;
}

const subjectsJsonCache = new WeakMap<Identity, string>();
const ANONYMOUS_SUBJECTS = JSON.stringify(computeSubjects(undefined));

/** `subjects` as JSON text, kept per identity object like auditSubjects. */
export function auditSubjectsJson(identity: Identity | undefined): string {
  if (identity === undefined) return ANONYMOUS_SUBJECTS;
  let s = subjectsJsonCache.get(identity);
  if (s === undefined) {
    s = JSON.stringify(auditSubjects(identity));
    subjectsJsonCache.set(identity, s);
  }
  return s;
}

/** A time as a JSON string; many events share a millisecond under load. */
let lastMs = -1;
let lastIso = '';
function isoAt(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = `"${new Date(ms).toISOString()}"`;
  }
  return lastIso;
}

/** A body as the event carries it: parsed JSON when it parses, else the text. */
export function dataValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The JSON-RPC error of a 2xx answer, read from its first bytes (at most 512, as ToolHive does), or
 * undefined when the answer is not a JSON-RPC error.
 */
export function jsonRpcErrorOf(head: string): { code: unknown; message: string } | undefined {
  // Most answers are results: skip the parse unless an "error" member can be there.
  if (!head.startsWith('{') || !head.includes('"error"')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(head);
  } catch {
    return undefined;
  }
  const error = (parsed as { error?: unknown } | null)?.error;
  if (error === null || typeof error !== 'object') return undefined;
  const e = error as { code?: unknown; message?: unknown };
  const message = typeof e.message === 'string' ? e.message.slice(0, 256) : '';
  return { code: e.code, message };
}
