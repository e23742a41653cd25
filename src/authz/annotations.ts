import { hintsOf } from './mcp.js';
import type { ToolAnnotations } from './request.js';

/**
 * Tool annotations learnt from the SERVER's tools/list answers (never from the client's call), as
 * ToolHive's annotation cache (`pkg/authz/annotation_cache.go`): one per proxy, shared by all callers.
 * A first-page tools/list replaces it (tools that disappeared lose their hints); a later page (the
 * request had a cursor) adds to it — ToolHive replaces on every page, forgetting the earlier ones.
 * Before any tools/list, a tool has no hints, so a policy that reads `resource.readOnlyHint` without
 * `has` errors and denies.
 */
export class AnnotationCache {
  private hints = new Map<string, ToolAnnotations>();

  get(tool: string): ToolAnnotations | undefined {
    return this.hints.get(tool);
  }

  /** Learns from an unfiltered tools/list result. */
  learn(tools: unknown[], nextPage: boolean): void {
    const next = nextPage ? new Map(this.hints) : new Map<string, ToolAnnotations>();
    for (const tool of tools) {
      const name = (tool as { name?: unknown } | null)?.name;
      if (typeof name !== 'string') continue;
      const h = hintsOf(tool);
      if (h !== undefined) next.set(name, h);
      else if (nextPage) next.delete(name);
    }
    this.hints = next;
  }

  get size(): number {
    return this.hints.size;
  }
}
