import { createServer, connect } from 'node:net';

/** A port the OS considers free on `host` right now. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on host:port; rejects when `until` settles first or on timeout. */
export async function waitForPort(host: string, port: number, timeoutMs: number, until?: Promise<unknown>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let stopped = false;
  let reason: unknown;
  until?.then(
    (v) => {
      stopped = true;
      reason = v;
    },
    (e) => {
      stopped = true;
      reason = e;
    },
  );
  let delay = 25;
  while (Date.now() < deadline) {
    if (stopped) throw reason instanceof Error ? reason : new Error(String(reason ?? 'stopped'));
    if (await canConnect(host, port)) return;
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 500);
  }
  throw new Error(`nothing accepted connections on ${host}:${port} within ${Math.round(timeoutMs / 1000)} s`);
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}
