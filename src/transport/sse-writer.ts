import type { ServerResponse } from 'node:http';

export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
} as const;

const KEEPALIVE_MS = 30_000;

/**
 * One Server-Sent Events stream on an HTTP response. Writes are fire-and-forget: a closed stream
 * drops what is written to it, and `closed` tells the owner to stop routing here.
 */
export class SseWriter {
  closed = false;
  private keepalive: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, string> = {},
    options: { keepalive?: boolean; onClose?: () => void } = {},
  ) {
    res.writeHead(200, { ...SSE_HEADERS, ...headers });
    res.flushHeaders();
    res.on('close', () => {
      this.closed = true;
      if (this.keepalive) clearInterval(this.keepalive);
      options.onClose?.();
    });
    if (options.keepalive) {
      this.keepalive = setInterval(() => this.comment('keep-alive'), KEEPALIVE_MS);
      this.keepalive.unref();
    }
  }

  /** `data` must be a single line (JSON without raw newlines); multi-line data is split as the spec says. */
  event(event: string, data: string): void {
    if (this.closed) return;
    if (data.includes('\n')) data = data.split(/\r?\n/).join('\ndata: ');
    this.res.write(`event: ${event}\ndata: ${data}\n\n`);
  }

  message(json: string): void {
    this.event('message', json);
  }

  comment(text: string): void {
    if (!this.closed) this.res.write(`: ${text}\n\n`);
  }

  end(): void {
    if (this.keepalive) clearInterval(this.keepalive);
    if (!this.closed) {
      this.closed = true;
      this.res.end();
    }
  }
}
