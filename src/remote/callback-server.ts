/**
 * The local OAuth redirect target (spec §7.2 step 5): `GET /callback` on 127.0.0.1:<port>. It checks
 * `state`, reports `error`, and hands the full callback URL to the flow. Pages carry CSP, X-Frame-Options
 * and nosniff headers; nothing from the query is echoed into them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

function page(title: string, text: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;
}

export interface CallbackServer {
  port: number;
  /** Resolves with the callback URL once a request with the right state and a code arrives. */
  result: Promise<URL>;
  close(): Promise<void>;
}

export class CallbackError extends Error {}

export async function startCallbackServer(port: number, expectedState: string): Promise<CallbackServer> {
  let settle!: { resolve: (u: URL) => void; reject: (e: Error) => void };
  const result = new Promise<URL>((resolve, reject) => {
    settle = { resolve, reject };
  });
  result.catch(() => {});
  let done = false;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://localhost:${port}`);
    if (req.method !== 'GET') {
      res.writeHead(405, { ...PAGE_HEADERS, allow: 'GET' }).end(page('Method not allowed', 'Use GET.'));
      return;
    }
    if (url.pathname === '/') {
      res.writeHead(200, PAGE_HEADERS).end(page('ToolHive OAuth', 'This page receives the answer of the authorization server for thv.'));
      return;
    }
    if (url.pathname !== '/callback') {
      res.writeHead(404, PAGE_HEADERS).end(page('Not found', 'Nothing here.'));
      return;
    }
    if (done) {
      res.writeHead(400, PAGE_HEADERS).end(page('Already done', 'The authorization has already completed.'));
      return;
    }
    const error = url.searchParams.get('error');
    if (error !== null) {
      done = true;
      res.writeHead(400, PAGE_HEADERS).end(page('Authorization failed', 'The authorization server refused the request. You can close this window.'));
      const desc = url.searchParams.get('error_description');
      settle.reject(new CallbackError(`the authorization server answered ${JSON.stringify(error)}${desc ? ` (${desc.slice(0, 200)})` : ''}`));
      return;
    }
    // A wrong state is someone else's request (or a forged one): refuse it and keep waiting.
    if (url.searchParams.get('state') !== expectedState) {
      res.writeHead(400, PAGE_HEADERS).end(page('Invalid request', 'invalid state parameter'));
      settle.reject(new CallbackError('invalid state parameter'));
      done = true;
      return;
    }
    if (!url.searchParams.get('code')) {
      done = true;
      res.writeHead(400, PAGE_HEADERS).end(page('Authorization failed', 'No authorization code was received.'));
      settle.reject(new CallbackError('no authorization code in the callback'));
      return;
    }
    done = true;
    res.writeHead(200, PAGE_HEADERS).end(page('Authentication complete', 'thv is now connected. You can close this window.'));
    settle.resolve(url);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    result,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
