import Docker from 'dockerode';
import { request } from 'node:http';
import { ErrorCodes, ThvError } from '../../errors.js';
import { findContainerEngine } from '../select.js';

/** The newest Engine API version thv speaks; older engines are met at their own version. */
export const MAX_API_VERSION = '1.41';
/** Older than this lacks what thv needs (attach/wait conditions, internal networks). */
const MIN_API_VERSION = '1.24';

function compareVersions(a: string, b: string): number {
  const [a1 = 0, a2 = 0] = a.split('.').map(Number);
  const [b1 = 0, b2 = 0] = b.split('.').map(Number);
  return a1 - b1 || a2 - b2;
}

function engineVersion(socketPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: '/version', method: 'GET', timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        try {
          const v = (JSON.parse(body) as { ApiVersion?: string }).ApiVersion;
          if (!v) throw new Error('no ApiVersion in /version');
          resolve(v);
        } catch (err) {
          reject(err as Error);
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

export interface EngineClient {
  docker: Docker;
  socketPath: string;
  apiVersion: string;
}

let cached: Promise<EngineClient> | undefined;

/** A client for the first engine that answers, at the API version both sides speak (negotiated once). */
export function engineClient(env: NodeJS.ProcessEnv = process.env): Promise<EngineClient> {
  cached ??= (async () => {
    const socketPath = await findContainerEngine(env);
    if (!socketPath) {
      throw new ThvError(ErrorCodes.RuntimeUnavailable, 'no container engine answers (looked for Docker, Podman and Colima sockets)', {
        hint: 'start Docker or Podman, or set DOCKER_HOST',
      });
    }
    const server = await engineVersion(socketPath).catch((err: Error) => {
      throw new ThvError(ErrorCodes.RuntimeUnavailable, `the container engine at ${socketPath} does not say its API version: ${err.message}`);
    });
    if (compareVersions(server, MIN_API_VERSION) < 0) {
      throw new ThvError(ErrorCodes.RuntimeUnavailable, `the container engine at ${socketPath} speaks API ${server}; thv needs ${MIN_API_VERSION} or newer`);
    }
    const apiVersion = compareVersions(server, MAX_API_VERSION) < 0 ? server : MAX_API_VERSION;
    return { docker: new Docker({ socketPath, version: `v${apiVersion}` }), socketPath, apiVersion };
  })();
  cached.catch(() => {
    cached = undefined;
  });
  return cached;
}

export { engineMessage, statusOf } from './engine-errors.js';
