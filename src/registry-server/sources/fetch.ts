import { createHash } from 'node:crypto';
import { readFile, mkdtemp, rm, realpath } from 'node:fs/promises';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import git from 'isomorphic-git';
import gitHttp from 'isomorphic-git/http/node';
import type { SourceConfig } from '../config.js';
import { parseGoDuration } from '../duration.js';
import { SourceDataError, checkServer, validateUpstreamRegistry, type ServerJSON } from './format.js';
import { httpGet } from './http.js';

/**
 * Fetchers: one function per source type, each returning the servers and a hash of what was fetched,
 * so the coordinator can skip a write when nothing changed.
 */
export interface Fetched {
  servers: ServerJSON[];
  hash: string;
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

function parseDocument(bytes: Buffer): ServerJSON[] {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new SourceDataError(`registry data is not valid JSON: ${(err as Error).message}`);
  }
  return validateUpstreamRegistry(doc);
}

async function fetchFile(src: SourceConfig): Promise<Fetched> {
  const f = src.file!;
  let bytes: Buffer;
  if (f.url) {
    bytes = await httpGet(f.url, parseGoDuration(f.timeout ?? '') ?? 30_000);
  } else {
    try {
      bytes = await readFile(resolve(f.path!));
    } catch (err) {
      throw new Error(`cannot read ${f.path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  return { servers: parseDocument(bytes), hash: sha256(bytes) };
}

const isRemote = (repo: string) => /^https?:\/\//i.test(repo);

async function readPassword(file: string): Promise<string> {
  const real = await realpath(file);
  if (!isAbsolute(real)) throw new Error('git.auth.passwordFile must be an absolute path');
  return (await readFile(real, 'utf8')).trim();
}

/** Resolves branch / tag / commit (default: HEAD) to a commit id inside `dir`. */
async function commitOf(dir: string, gitdir: string | undefined, g: NonNullable<SourceConfig['git']>): Promise<string> {
  const base = { fs, dir, ...(gitdir ? { gitdir } : {}) };
  if (g.commit) return (await git.expandOid({ ...base, oid: g.commit }));
  const ref = g.branch ?? (g.tag ? `refs/tags/${g.tag}` : 'HEAD');
  const oid = await git.resolveRef({ ...base, ref, depth: 10 });
  // An annotated tag points at a tag object: follow it to the commit.
  const obj = await git.readObject({ ...base, oid });
  if (obj.type === 'tag') return (obj.object as { object: string }).object;
  return oid;
}

async function fetchGit(src: SourceConfig): Promise<Fetched> {
  const g = src.git!;
  const onAuth = g.auth ? async () => ({ username: g.auth!.username, password: await readPassword(g.auth!.passwordFile) }) : undefined;
  let dir: string;
  let gitdir: string | undefined;
  let temp: string | undefined;
  if (isRemote(g.repository)) {
    temp = await mkdtemp(join(tmpdir(), 'thv-registry-git-'));
    dir = temp;
    const ref = g.branch ?? g.tag;
    await git.clone({
      fs,
      http: gitHttp,
      dir,
      url: g.repository,
      noCheckout: true,
      noTags: !g.tag,
      ...(ref ? { ref, singleBranch: true } : {}),
      ...(g.commit ? {} : { depth: 1 }),
      ...(onAuth ? { onAuth } : {}),
    });
  } else {
    // A repository on this machine (path or file:// URL): read its objects in place.
    dir = g.repository.replace(/^file:\/\//i, '');
    if (fs.existsSync(join(dir, '.git'))) gitdir = join(dir, '.git');
    else gitdir = dir; // bare repository
  }
  try {
    const oid = await commitOf(dir, gitdir, g);
    const { blob } = await git.readBlob({ fs, dir, ...(gitdir ? { gitdir } : {}), oid, filepath: g.path });
    const bytes = Buffer.from(blob);
    return { servers: parseDocument(bytes), hash: sha256(bytes) };
  } finally {
    if (temp) await rm(temp, { recursive: true, force: true });
  }
}

const MAX_PAGES = 1000;
const MAX_SERVERS = 100_000;

async function fetchApi(src: SourceConfig): Promise<Fetched> {
  const a = src.api!;
  const timeout = parseGoDuration(a.timeout ?? '') ?? 10_000;
  const base = a.endpoint.replace(/\/+$/, '');
  const servers: ServerJSON[] = [];
  let cursor = '';
  for (let page = 0; ; page++) {
    if (page >= MAX_PAGES) throw new Error(`upstream registry has more than ${MAX_PAGES} pages`);
    const url = `${base}/v0.1/servers?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    let body: { servers?: Array<{ server?: unknown }>; metadata?: { nextCursor?: string } };
    try {
      body = JSON.parse((await httpGet(url, timeout)).toString('utf8'));
    } catch (err) {
      if (err instanceof SyntaxError) throw new SourceDataError(`GET ${url}: response is not JSON`);
      throw err;
    }
    if (!Array.isArray(body?.servers)) throw new SourceDataError(`GET ${url}: response has no servers list`);
    body.servers.forEach((item, i) => servers.push(checkServer(item?.server, `servers[${i}].server`)));
    if (servers.length > MAX_SERVERS) throw new Error(`upstream registry has more than ${MAX_SERVERS} servers`);
    const next = body.metadata?.nextCursor;
    if (typeof next !== 'string' || next === '' || next === cursor) break;
    cursor = next;
  }
  // The upstream's own _meta (its official block) says nothing about our copy.
  for (const s of servers) {
    const meta = s._meta as Record<string, unknown> | undefined;
    if (meta) delete meta['io.modelcontextprotocol.registry/official'];
  }
  return { servers, hash: sha256(JSON.stringify(servers)) };
}

export async function fetchSource(src: SourceConfig): Promise<Fetched> {
  switch (src.type) {
    case 'file':
      return fetchFile(src);
    case 'git':
      return fetchGit(src);
    case 'api':
      return fetchApi(src);
    default:
      throw new Error(`${src.type} sources are not synced from anywhere`);
  }
}
