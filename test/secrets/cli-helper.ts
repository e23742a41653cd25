import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, THV_BIN, type RunResult } from '../helpers/thv.js';

/**
 * A private home for one test: XDG_* point into a fresh temp dir, so config.yaml, the secrets file and the
 * state of concurrent tests never meet. `thv(args, {input})` runs the built CLI with stdin piped.
 */
export interface TestHome {
  dir: string;
  env: NodeJS.ProcessEnv;
  thv(args: string[], options?: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<RunResult>;
  /** Every file under the home, with its content (for "the value is nowhere on disk" checks). */
  files(): Array<{ path: string; content: Buffer }>;
  cleanup(): void;
}

export function makeHome(prefix = 'thv-home-'): TestHome {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const env: NodeJS.ProcessEnv = {
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_STATE_HOME: join(dir, 'state'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    TOOLHIVE_SECRETS_PROVIDER: '',
    TOOLHIVE_SECRETS_PASSWORD: '',
  };
  return {
    dir,
    env,
    thv(args, options = {}) {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [THV_BIN, ...args], {
          cwd: REPO_ROOT,
          env: { ...process.env, ...env, ...options.env },
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.stdin.end(options.input ?? '');
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`thv ${args.join(' ')} did not finish in time\n${stderr}`));
        }, options.timeoutMs ?? 30_000);
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
      });
    },
    files() {
      const out: Array<{ path: string; content: Buffer }> = [];
      const walk = (d: string): void => {
        for (const name of readdirSync(d)) {
          const p = join(d, name);
          if (statSync(p).isDirectory()) walk(p);
          else out.push({ path: p, content: readFileSync(p) });
        }
      };
      walk(dir);
      return out;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
