/**
 * Test helpers for the registry service: a fresh PostgreSQL database per test file (on the server
 * scripts/services.sh starts), registry documents, git repositories made with the real git CLI, and
 * the service started in-process on ephemeral loopback ports.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { createLogger } from '../../src/logging.js';
import { parseConfig } from '../../src/registry-server/config.js';
import type { Db } from '../../src/registry-server/db/db.js';
import { startRegistry, type RunningRegistry } from '../../src/registry-server/server.js';

export const PG_URL = process.env.THV_TEST_PG_URL ?? 'postgres://thv_test:thv_test@127.0.0.1:5432/thv_registry_test';
export const CLI_ENTRY = new URL('./cli-entry.ts', import.meta.url).pathname;

export interface TestDatabase {
  name: string;
  /** The `database:` block for a config file. */
  yaml: string;
  url: string;
  drop(): Promise<void>;
}

/** A new, empty database owned by the test role. Fails loudly when PostgreSQL is not reachable. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = new pg.Client({ connectionString: PG_URL });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`PostgreSQL is not reachable at ${PG_URL.replace(/:[^:@/]*@/, ':***@')} (run scripts/services.sh): ${(err as Error).message}`);
  }
  const name = `thv_rs_${randomBytes(5).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(PG_URL);
  const yaml = `database:
  host: ${u.hostname}
  port: ${u.port || 5432}
  user: ${decodeURIComponent(u.username)}
  password: ${decodeURIComponent(u.password)}
  database: ${name}
  sslMode: disable
`;
  const url = `${u.protocol}//${u.username}:${u.password}@${u.host}/${name}`;
  return {
    name,
    yaml,
    url,
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface ServerDoc {
  name: string;
  version: string;
  description: string;
  [k: string]: unknown;
}

export function registryDocument(servers: ServerDoc[]): string {
  return JSON.stringify({ version: '1.0.0', meta: { last_updated: '2025-11-26T00:27:46Z' }, data: { servers } });
}

export function makeServers(n: number, prefix = 'io.test', versions = 1): ServerDoc[] {
  const out: ServerDoc[] = [];
  for (let i = 0; i < n; i++)
    for (let v = 0; v < versions; v++)
      out.push({ name: `${prefix}/server-${String(i).padStart(5, '0')}`, version: `1.${v}.0`, description: `Test server number ${i}`, title: `Server ${i}` });
  return out;
}

/** A git repository with one commit per `commits` entry (file name → content), tagged as asked. */
export function makeGitRepo(dir: string, commits: Array<{ files: Record<string, string>; tag?: string; branch?: string }>): string[] {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } }).trim();
  git('init', '-q', '-b', 'main');
  const ids: string[] = [];
  for (const c of commits) {
    if (c.branch) git('checkout', '-q', '-B', c.branch);
    for (const [f, content] of Object.entries(c.files)) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), content);
      git('add', f);
    }
    git('commit', '-q', '-m', 'update');
    if (c.tag) git('tag', '-a', c.tag, '-m', c.tag);
    ids.push(git('rev-parse', 'HEAD'));
  }
  git('checkout', '-q', 'main');
  return ids;
}

export async function startInProcess(yaml: string, opts: { db?: Db; noSync?: boolean; maxTickMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<RunningRegistry> {
  const config = parseConfig(yaml, opts.env ?? {});
  const logger = createLogger();
  logger.level = process.env.THV_TEST_LOG ? 'debug' : 'silent';
  return startRegistry({ config, logger, address: '127.0.0.1:0', internalAddress: '127.0.0.1:0', db: opts.db, noSync: opts.noSync, maxTickMs: opts.maxTickMs ?? 500 });
}

export async function getJson(url: string, init?: RequestInit): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    /* not JSON: keep the text, the test will say so */
  }
  return { status: res.status, body, headers: res.headers };
}

/** Polls `check` until it returns a truthy value or the deadline passes. */
export async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every server of a registry, following nextCursor; also returns the number of pages. */
export async function listAll(base: string, query = '', headers: Record<string, string> = {}): Promise<{ servers: any[]; pages: number }> {
  const servers: any[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const sep = query ? `&${query}` : '';
    const r = await getJson(`${base}/v0.1/servers?limit=7${sep}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers });
    if (r.status !== 200) throw new Error(`list failed: ${r.status} ${JSON.stringify(r.body)}`);
    servers.push(...r.body.servers);
    cursor = r.body.metadata.nextCursor;
    pages++;
  } while (cursor && pages < 1000);
  return { servers, pages };
}

/** The CLI as a child process (through tsx); resolves with the URLs it prints. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; ready: Promise<{ url: string; internalUrl: string }>; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI_ENTRY, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = new Promise<{ url: string; internalUrl: string }>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) resolve(JSON.parse(line));
    });
    void exited.then((code) => reject(new Error(`thv-registry-api exited (${code}) before it was ready: ${err.slice(-2000)}`)));
  });
  ready.catch(() => undefined);
  return { child, ready, stderr: () => err, exited };
}

/**
 * Serves the git repositories under `root` over smart HTTP (the real `git http-backend` CGI), with
 * HTTP Basic authentication, on 127.0.0.1. URL: `${url}/<repo dir name>`.
 */
export async function serveGitHttp(root: string, user: string, password: string): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  let count = 0;
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const server = createServer((req, res) => {
    count++;
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end();
      return;
    }
    const u = new URL(req.url ?? '/', 'http://x');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(u.pathname),
        QUERY_STRING: u.search.slice(1),
        REQUEST_METHOD: req.method,
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_USER: user,
        REMOTE_ADDR: '127.0.0.1',
        GIT_HTTP_MAX_REQUEST_BUFFER: '100M',
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const i = line.indexOf(':');
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = Number(v.split(' ')[0]);
        else res.setHeader(k, v);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => res.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as import('node:net').AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => count,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
