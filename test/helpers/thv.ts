import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Tests run the built CLI, as users do; the README test command builds it first. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const THV_BIN = fileURLToPath(new URL('../../bin/thv.js', import.meta.url));
export const ECHO_SERVER = fileURLToPath(new URL('../fixtures/echo-server.mjs', import.meta.url));
export const EVERYTHING_SERVER = fileURLToPath(new URL('../../node_modules/.bin/mcp-server-everything', import.meta.url));

function assertBuilt(): void {
  if (!existsSync(new URL('../../dist/cli/thv.js', import.meta.url))) {
    throw new Error('dist/ is missing: run "npm run build" (the README test command does it)');
  }
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs thv to completion (bounded). */
export function runThv(args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<RunResult> {
  assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [THV_BIN, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`thv ${args.join(' ')} did not finish in time\n${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface RunningThv {
  url: string;
  /** http://host:port without the path. */
  base: string;
  port: number;
  child: ChildProcess;
  stderr(): string;
  /** SIGINT, then wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `thv run … --foreground` and resolves when it prints the URL. Fails loudly if it exits or
 * does not become ready in time.
 */
export function startThv(args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<RunningThv> {
  assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [THV_BIN, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let settled = false;
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      child.kill('SIGKILL');
      reject(new Error(`thv did not become ready in time\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /available at (http:\/\/\S+)/.exec(stdout);
      if (m && !settled) {
        settled = true;
        clearTimeout(timer);
        const url = m[1]!;
        const u = new URL(url);
        resolve({
          url,
          base: `${u.protocol}//${u.host}`,
          port: Number(u.port),
          child,
          stderr: () => stderr,
          async stop() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
            const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            const code = await exited;
            clearTimeout(killer);
            return code;
          },
        });
      }
    });
    void exited.then((code) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`thv exited with ${code} before it was ready\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

/** Minimal raw HTTP helpers for protocol-level assertions. */
export const JSON_AND_SSE = 'application/json, text/event-stream';

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: JSON_AND_SSE, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function initializeBody(id: string | number = 1): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'thv-test', version: '1.0.0' } },
  };
}

/** initialize + notifications/initialized; returns the session id. */
export async function openSession(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await post(url, initializeBody(), headers);
  if (res.status !== 200) throw new Error(`initialize answered ${res.status}: ${await res.text()}`);
  await res.text();
  const sid = res.headers.get('mcp-session-id');
  if (!sid) throw new Error('initialize answered without Mcp-Session-Id');
  const ack = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sid, ...headers });
  await ack.text();
  return sid;
}

/** Parses an SSE body into its `data:` JSON messages. */
export function sseMessages(text: string): unknown[] {
  const out: unknown[] = [];
  for (const block of text.split(/\n\n/)) {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (data) out.push(JSON.parse(data));
  }
  return out;
}

/** The JSON-RPC messages of a response, whichever of JSON or SSE it is. */
export async function messagesOf(res: Response): Promise<Array<Record<string, unknown>>> {
  const text = await res.text();
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return sseMessages(text) as Array<Record<string, unknown>>;
  return [JSON.parse(text) as Record<string, unknown>];
}

export type RpcError = { jsonrpc: string; id?: unknown; error: { code: number; message: string } };

/** Asserts a JSON-RPC error answer with this HTTP status and error code; returns its body. */
export async function expectRpcError(res: Response, status: number, code: number): Promise<RpcError> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(text) as RpcError;
  assert.equal(body.jsonrpc, '2.0');
  assert.equal(body.error.code, code);
  return body;
}
