/** Span attribute helpers shared by the telemetry stage. */

/** Argument names whose values never reach a span (ToolHive's list, matched as substrings, case-insensitive). */
const SENSITIVE = /password|token|secret|key|auth|credential|api_key|access_token|refresh_token|private/i;
const MAX_VALUE_CHARS = 100;
const MAX_TOTAL_CHARS = 200;

/**
 * `gen_ai.tool.call.arguments`: `k=v, k=v` with sensitive keys `[REDACTED]`, each value cut at 100
 * characters and the whole at 200 (spec §8.2).
 */
export function formatToolArguments(args: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(args)) {
    let value: string;
    if (SENSITIVE.test(k)) value = '[REDACTED]';
    else {
      value = typeof v === 'string' ? v : safeJson(v);
      if (value.length > MAX_VALUE_CHARS) value = `${value.slice(0, MAX_VALUE_CHARS)}...`;
    }
    parts.push(`${k}=${value}`);
  }
  const out = parts.join(', ');
  return out.length > MAX_TOTAL_CHARS ? `${out.slice(0, MAX_TOTAL_CHARS)}...` : out;
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
