// Kept apart from client.ts so that modules needing only these do not load dockerode.

/** The engine's HTTP status on a failed call, when it has one. */
export function statusOf(err: unknown): number | undefined {
  const s = (err as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof s === 'number' ? s : undefined;
}

/** The engine's own message ("No such image: …") rather than dockerode's wrapper text. */
export function engineMessage(err: unknown): string {
  const json = (err as { json?: { message?: string } } | undefined)?.json;
  if (json && typeof json.message === 'string') return json.message;
  return err instanceof Error ? err.message : String(err);
}
