/**
 * Lifecycle tests run the real CLI (bin/thv.js → dist) on the process runtime with every XDG directory
 * pointed at a per-test temporary directory, and clean up every proxy they started.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runThv, type RunResult } from '../helpers/thv.js';

export const HTTP_ECHO = fileURLToPath(new URL('./fixtures/http-echo.mjs', import.meta.url));
export const CRASH = fileURLToPath(new URL('./fixtures/crash.mjs', import.meta.url));

export interface Sandbox {
  root: string;
  env: NodeJS.ProcessEnv;
  thv(args: string[], timeoutMs?: number): Promise<RunResult>;
  /** thv that must succeed. */
  ok(args: string[], timeoutMs?: number): Promise<RunResult>;
  /** Every file under the sandbox's XDG directories, relative to root. */
  files(): Promise<string[]>;
  statusFile(name: string): Promise<Record<string, unknown> | undefined>;
  /** Kills every proxy recorded in a status file and removes the directory. */
  cleanup(): Promise<void>;
}

export async function sandbox(extraEnv: NodeJS.ProcessEnv = {}): Promise<Sandbox> {
  const root = await mkdtemp(join(tmpdir(), 'thv-wl-'));
  const env: NodeJS.ProcessEnv = {
    XDG_STATE_HOME: join(root, 'state'),
    XDG_DATA_HOME: join(root, 'data'),
    XDG_CONFIG_HOME: join(root, 'config'),
    XDG_CACHE_HOME: join(root, 'cache'),
    THV_RUNTIME: 'process',
    TOOLHIVE_SECRETS_PROVIDER: 'environment',
    ...extraEnv,
  };
  const statusDir = join(root, 'data', 'toolhive', 'statuses');
  const sb: Sandbox = {
    root,
    env,
    thv: (args, timeoutMs = 60_000) => runThv(args, { env, timeoutMs }),
    async ok(args, timeoutMs) {
      const r = await sb.thv(args, timeoutMs);
      if (r.code !== 0) throw new Error(`thv ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r;
    },
    async files() {
      const out: string[] = [];
      const walk = async (dir: string, rel: string): Promise<void> => {
        let entries;
        try {
          entries = await readdir(dir, { withFileTypes: true });
        } catch {
          return;
        }
        for (const e of entries) {
          if (e.isDirectory()) await walk(join(dir, e.name), `${rel}${e.name}/`);
          else out.push(`${rel}${e.name}`);
        }
      };
      await walk(root, '');
      return out.sort();
    },
    async statusFile(name) {
      try {
        return JSON.parse(await readFile(join(statusDir, `${name}.json`), 'utf8')) as Record<string, unknown>;
      } catch {
        return undefined;
      }
    },
    async cleanup() {
      let names: string[] = [];
      try {
        names = (await readdir(statusDir)).filter((n) => n.endsWith('.json'));
      } catch {
        // nothing started
      }
      for (const n of names) {
        const status = await sb.statusFile(n.slice(0, -5));
        const pid = Number(status?.['process_id'] ?? 0);
        if (pid > 0) {
          for (const target of [-pid, pid]) {
            try {
              process.kill(target, 'SIGKILL');
            } catch {
              // gone
            }
          }
        }
      }
      await rm(root, { recursive: true, force: true });
    },
  };
  return sb;
}

/** The URL printed by `thv run`/`thv start`. */
export function urlFrom(stdout: string): string {
  const m = /available at (http:\/\/\S+)/.exec(stdout);
  if (!m) throw new Error(`no URL in: ${stdout}`);
  return m[1]!;
}

/** Calls one tool through the official MCP SDK client; returns its text. */
export async function callTool(url: string, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const client = new Client({ name: 'thv-workload-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const result = (await client.callTool({ name: tool, arguments: args })) as { content: Array<{ type: string; text?: string }> };
    return result.content.map((c) => c.text ?? '').join('');
  } finally {
    await client.close();
  }
}

export type ListedWorkload = { name: string; status: string; url: string; status_context: string; process_id: number; group: string; labels: Record<string, string> };

export async function listJson(sb: Sandbox, args: string[] = ['--all']): Promise<ListedWorkload[]> {
  const r = await sb.ok(['list', ...args, '--output', 'json']);
  return JSON.parse(r.stdout) as ListedWorkload[];
}

/** Polls `cond` until it returns a value (not undefined/false) or the deadline passes. */
export async function waitFor<T>(what: string, cond: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let delay = 50;
  for (;;) {
    const v = await cond();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 500);
  }
}

/** Alive and not a zombie waiting to be reaped (detached proxies are reparented to init). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return false;
  }
}
