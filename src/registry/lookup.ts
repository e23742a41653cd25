import { ErrorCodes, ThvError } from '../errors.js';
import type { RegistryEntry } from './types.js';

/**
 * Finding an entry by what the user typed (spec §6.2): the exact full name; or, for a name without `/`,
 * the one entry whose name ends in `/<query>`. Several matches are an error that lists them.
 */
export function findEntry(entries: readonly RegistryEntry[], query: string): RegistryEntry | undefined {
  const exact = entries.find((e) => e.name === query);
  if (exact !== undefined || query.includes('/')) return exact;
  const matches = entries.filter((e) => e.name.endsWith(`/${query}`));
  if (matches.length > 1) {
    throw new ThvError(
      ErrorCodes.InvalidArgument,
      `multiple servers match '${query}': ${matches.map((m) => m.name).join(', ')} — use the full name`,
    );
  }
  return matches[0];
}

/** Case-insensitive search over name, title, description, tags and tools (ToolHive searches these too). */
export function searchEntries(entries: readonly RegistryEntry[], query: string): RegistryEntry[] {
  const q = query.toLowerCase();
  return entries.filter(
    (e) =>
      e.name.toLowerCase().includes(q) ||
      (e.title ?? '').toLowerCase().includes(q) ||
      e.description.toLowerCase().includes(q) ||
      e.tags.some((t) => t.toLowerCase().includes(q)) ||
      e.tools.some((t) => t.toLowerCase().includes(q)),
  );
}

/** Sorted by name, as `thv registry list` prints them. */
export function sortEntries(entries: readonly RegistryEntry[]): RegistryEntry[] {
  return [...entries].sort((a, b) => a.name.localeCompare(b.name));
}
