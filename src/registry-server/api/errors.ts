import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** Every error answer is `{"error": "<message>"}` as JSON (spec §3.1). */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
  ) {
    super(message);
  }
}

export function jsonError(c: Context, status: ContentfulStatusCode, message: string): Response {
  return c.json({ error: message }, status);
}

export const badRequest = (m: string) => new ApiError(400, m);
export const notFound = (m: string) => new ApiError(404, m);
export const forbidden = (m: string) => new ApiError(403, m);
export const conflict = (m: string) => new ApiError(409, m);
