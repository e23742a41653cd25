/**
 * ToolHive's tools-override file (`--tools-override`, spec §3.4, `pkg/cli/tools_override.go`):
 *
 *   { "toolsOverride": { "<actual tool name>": { "name": "<new name>", "description": "<new description>" } } }
 *
 * Errors match the reference: a file that cannot be opened or decoded fails the run; an absent (or null)
 * `toolsOverride` is "tools override are empty"; an entry with neither a name nor a description is rejected
 * ("tool override for X must have either Name or Description set", from the config builder).
 * Like Go's encoding/json, object keys match case-insensitively and unknown keys are ignored.
 */
import { readFileSync } from 'node:fs';
import { ErrorCodes, ThvError } from '../errors.js';
import type { ToolOverride } from './run-config.js';

function configError(message: string, cause?: unknown): ThvError {
  return new ThvError(ErrorCodes.InvalidConfig, `failed to load tools override: ${message}`, cause === undefined ? undefined : { cause });
}

/** Go's error text for a failed open: `open <path>: no such file or directory`. */
function openErrorText(path: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return `open ${path}: no such file or directory`;
    case 'EACCES':
    case 'EPERM':
      return `open ${path}: permission denied`;
    case 'EISDIR':
      return `read ${path}: is a directory`;
    default:
      return `open ${path}: ${(err as Error).message}`;
  }
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** The value of the first key matching `name` case-insensitively (an exact match wins, as in Go). */
function field(obj: Record<string, unknown>, name: string): { present: boolean; value: unknown } {
  if (Object.hasOwn(obj, name)) return { present: true, value: obj[name] };
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(obj)) {
    if (key.toLowerCase() === lower) return { present: true, value };
  }
  return { present: false, value: undefined };
}

/** Parses the content of a tools-override file. Throws `ThvError(InvalidConfig)`. */
export function parseToolsOverride(text: string): Record<string, ToolOverride> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw configError(`failed to decode tools override file: ${(err as Error).message}`, err);
  }
  if (doc === null) throw configError('tools override are empty');
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw configError(`failed to decode tools override file: cannot unmarshal ${jsonType(doc)} into the tools override object`);
  }
  const { value: overrides } = field(doc as Record<string, unknown>, 'toolsOverride');
  if (overrides === undefined || overrides === null) throw configError('tools override are empty');
  if (typeof overrides !== 'object' || Array.isArray(overrides)) {
    throw configError(`failed to decode tools override file: "toolsOverride" must be an object, got ${jsonType(overrides)}`);
  }

  const result: Record<string, ToolOverride> = {};
  for (const [tool, entry] of Object.entries(overrides as Record<string, unknown>)) {
    if (entry !== null && (typeof entry !== 'object' || Array.isArray(entry))) {
      throw configError(`failed to decode tools override file: override for ${JSON.stringify(tool)} must be an object, got ${jsonType(entry)}`);
    }
    const override: ToolOverride = {};
    for (const key of ['name', 'description'] as const) {
      const { value } = entry === null ? { value: undefined } : field(entry as Record<string, unknown>, key);
      if (value === undefined || value === null) continue;
      if (typeof value !== 'string') {
        throw configError(`failed to decode tools override file: "${key}" of ${JSON.stringify(tool)} must be a string, got ${jsonType(value)}`);
      }
      if (value !== '') override[key] = value;
    }
    if (override.name === undefined && override.description === undefined) {
      throw configError(`tool override for ${tool} must have either Name or Description set`);
    }
    result[tool] = override;
  }
  return result;
}

/**
 * Loads ToolHive's tools-override JSON file. Returns the map actual tool name → `{name?, description?}`
 * (empty strings dropped, as Go's `omitempty` would on save). Throws `ThvError(InvalidConfig)`.
 */
export function loadToolsOverride(path: string): Record<string, ToolOverride> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw configError(`failed to open tools override file: ${openErrorText(path, err)}`, err);
  }
  return parseToolsOverride(text);
}
