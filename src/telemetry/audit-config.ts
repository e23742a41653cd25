/**
 * The audit configuration (`--audit-config <file.json>`, or `--enable-audit` for the defaults), in
 * ToolHive's camelCase format (spec run-and-proxy §8.3, proxy-auth-authz §5):
 *
 *   {"enabled", "component", "eventTypes": [...], "excludeEventTypes": [...], "includeRequestData": false,
 *    "includeResponseData": false, "detectApplicationErrors": true, "maxDataSize": 1024,
 *    "maxDelegationDepth": 10, "logFile": "/path"}
 */
import { ErrorCodes, ThvError } from '../errors.js';

/** Every event type thv emits, and the vMCP workflow types ToolHive defines (accepted, never emitted here). */
export const AUDIT_EVENT_TYPES: ReadonlySet<string> = new Set([
  'mcp_initialize',
  'mcp_tool_call',
  'mcp_tools_list',
  'mcp_resource_read',
  'mcp_resources_list',
  'mcp_prompt_get',
  'mcp_prompts_list',
  'mcp_notification',
  'mcp_ping',
  'mcp_logging',
  'mcp_completion',
  'mcp_roots_list_changed',
  'mcp_request',
  'sse_connection',
  'http_request',
  'vmcp_workflow_started',
  'vmcp_workflow_completed',
  'vmcp_workflow_failed',
  'vmcp_workflow_step_started',
  'vmcp_workflow_step_completed',
  'vmcp_workflow_step_failed',
  'vmcp_workflow_step_skipped',
]);

export const DEFAULT_MAX_DATA_SIZE = 1024;
export const DEFAULT_MAX_DELEGATION_DEPTH = 10;

export interface AuditSettings {
  enabled: boolean;
  /** Config `component`; the workload name is used when empty. */
  component: string | undefined;
  /** Allow-list; empty admits every type. */
  eventTypes: ReadonlySet<string>;
  /** Deny-list; wins over the allow-list. */
  excludeEventTypes: ReadonlySet<string>;
  includeRequestData: boolean;
  includeResponseData: boolean;
  detectApplicationErrors: boolean;
  maxDataSize: number;
  maxDelegationDepth: number;
  /** Append to this file (mode 0600); stdout when undefined. */
  logFile: string | undefined;
}

function invalid(message: string): ThvError {
  return new ThvError(ErrorCodes.InvalidConfig, `invalid audit configuration: ${message}`);
}

function bool(doc: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const v = doc[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'boolean') throw invalid(`${key} must be true or false`);
  return v;
}

function nonNegativeInt(doc: Record<string, unknown>, key: string): number | undefined {
  const v = doc[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw invalid(`${key} must be a non-negative integer`);
  return v;
}

function typeList(doc: Record<string, unknown>, key: string): Set<string> {
  const v = doc[key];
  if (v === undefined || v === null) return new Set();
  if (!Array.isArray(v) || v.some((t) => typeof t !== 'string')) throw invalid(`${key} must be a list of event types`);
  for (const t of v as string[]) {
    if (!AUDIT_EVENT_TYPES.has(t)) throw invalid(`unknown event type ${JSON.stringify(t)} in ${key}`);
  }
  return new Set(v as string[]);
}

/**
 * Validates a RunConfig `audit_config` object. `enabled` defaults to true: ToolHive turns auditing on
 * by the presence of the flag, and a file without the key means "audit as configured here".
 */
export function parseAuditConfig(doc: unknown): AuditSettings {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw invalid('the configuration must be a JSON object');
  const d = doc as Record<string, unknown>;
  const component = d['component'];
  if (component !== undefined && component !== null && typeof component !== 'string') throw invalid('component must be a string');
  const logFile = d['logFile'];
  if (logFile !== undefined && logFile !== null && typeof logFile !== 'string') throw invalid('logFile must be a string');
  const maxDataSize = nonNegativeInt(d, 'maxDataSize');
  const maxDelegationDepth = nonNegativeInt(d, 'maxDelegationDepth');
  return {
    enabled: bool(d, 'enabled', true),
    component: typeof component === 'string' && component !== '' ? component : undefined,
    eventTypes: typeList(d, 'eventTypes'),
    excludeEventTypes: typeList(d, 'excludeEventTypes'),
    includeRequestData: bool(d, 'includeRequestData', false),
    includeResponseData: bool(d, 'includeResponseData', false),
    detectApplicationErrors: bool(d, 'detectApplicationErrors', true),
    // 0 means "the default", as in ToolHive.
    maxDataSize: maxDataSize === undefined || maxDataSize === 0 ? DEFAULT_MAX_DATA_SIZE : maxDataSize,
    maxDelegationDepth: maxDelegationDepth === undefined || maxDelegationDepth === 0 ? DEFAULT_MAX_DELEGATION_DEPTH : maxDelegationDepth,
    logFile: typeof logFile === 'string' && logFile !== '' ? logFile : undefined,
  };
}

/** Whether events of this type are written. */
export function auditsType(settings: AuditSettings, type: string): boolean {
  if (settings.excludeEventTypes.has(type)) return false;
  return settings.eventTypes.size === 0 || settings.eventTypes.has(type);
}
