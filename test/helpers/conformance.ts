/**
 * Runs the official MCP conformance suite (server side) against a Streamable HTTP URL
 * and returns a parsed summary.
 *
 * The suite needs Node 22, so it is run through
 *   npx -y -p node@22 -p @modelcontextprotocol/conformance@0.1.16 conformance server --url <url> ...
 * which does not touch the system Node. Results are read from the per-scenario
 * `checks.json` files the suite writes with `-o <dir>` (its only machine-readable output;
 * in full-suite mode the text output only has per-scenario totals).
 *
 * Counting follows the suite: `passed` = SUCCESS checks, `failed` = FAILURE checks,
 * `total` = passed + failed. WARNING and INFO checks are informational and not counted
 * (WARNINGs are returned in `warnings`).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CONFORMANCE_PACKAGE = '@modelcontextprotocol/conformance@0.1.16';
/** The suite requires Node >= 22; npx provides it without touching the system Node. */
export const CONFORMANCE_NODE = 'node@22';

export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO';

export interface ConformanceCheck {
  scenario: string;
  id: string;
  name: string;
  description: string;
  status: CheckStatus;
  errorMessage?: string;
  details?: unknown;
}

export interface ConformanceResult {
  /** SUCCESS checks. */
  passed: number;
  /** FAILURE checks, plus synthetic failures when the suite did not (fully) run. */
  failed: number;
  /** passed + failed (the suite's own denominator; WARNING/INFO are not counted). */
  total: number;
  /** One line per failed check: `<scenario>: <check id>: <message>`. */
  failures: string[];
  /** One line per WARNING check (not failures). */
  warnings: string[];
  /** Every check the suite recorded (all statuses), in scenario order. */
  checks: ConformanceCheck[];
  /** Scenarios that produced results. */
  scenarios: string[];
  /** Combined stdout + stderr of the suite process(es). */
  raw: string;
  /** Exit code of the (last failing, else last) suite process; null if killed by a signal. */
  exitCode: number | null;
  timedOut: boolean;
}

export interface ConformanceOptions {
  /** Overall budget for all suite processes (default 300 000 ms). */
  timeoutMs?: number;
  /** Run only these scenarios (one suite process each). Default: the whole suite. */
  scenarios?: string[];
  /**
   * Suite to run when `scenarios` is not given: "all" (default here: every server scenario,
   * including the "pending" json-schema-2020-12 and server-sse-polling), "active" (the CLI's
   * default: excludes pending) or "pending".
   */
  suite?: 'all' | 'active' | 'pending';
  /** Extra environment for the suite process. */
  env?: NodeJS.ProcessEnv;
}

interface ProcessOutcome {
  output: string;
  exitCode: number | null;
  timedOut: boolean;
}

const DEFAULT_TIMEOUT_MS = 300_000;
const KILL_GRACE_MS = 2_000;
const STATUSES: readonly string[] = ['SUCCESS', 'FAILURE', 'WARNING', 'INFO'];
/** `-o` result directories are named `server-<scenario>-<ISO timestamp with : and . replaced by ->`. */
const RESULT_DIR_RE = /^server-(.+)-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)$/;

/** Runs `conformance <args>` via npx; rejects only if the process cannot be spawned. */
export function runConformanceCli(
  args: readonly string[],
  timeoutMs: number,
  env?: NodeJS.ProcessEnv,
): Promise<ProcessOutcome> {
  return new Promise<ProcessOutcome>((resolve, reject) => {
    const child = spawn('npx', ['-y', '-p', CONFORMANCE_NODE, '-p', CONFORMANCE_PACKAGE, 'conformance', ...args], {
      cwd: tmpdir(),
      // Own process group, so a timeout can kill npx and everything it started.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', npm_config_update_notifier: 'false', ...env },
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));

    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (signal: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // group already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup('SIGTERM');
      killTimer = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
      killTimer.unref();
    }, Math.max(1, timeoutMs));

    child.once('error', (err) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      reject(new Error(`failed to start the conformance suite via npx: ${err.message}`));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      if (timedOut) killGroup('SIGKILL'); // stragglers that ignored SIGTERM
      resolve({ output, exitCode: code, timedOut });
    });
  });
}

function toCheck(scenario: string, value: unknown): ConformanceCheck | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.id !== 'string' || typeof v.status !== 'string' || !STATUSES.includes(v.status)) return undefined;
  const check: ConformanceCheck = {
    scenario,
    id: v.id,
    name: typeof v.name === 'string' ? v.name : v.id,
    description: typeof v.description === 'string' ? v.description : '',
    status: v.status as CheckStatus,
  };
  if (typeof v.errorMessage === 'string') check.errorMessage = v.errorMessage;
  if (v.details !== undefined) check.details = v.details;
  return check;
}

/** Reads every `<outDir>/server-<scenario>-<ts>/checks.json`. */
async function readResults(outDir: string): Promise<{ results: Map<string, ConformanceCheck[]>; problems: string[] }> {
  const results = new Map<string, ConformanceCheck[]>();
  const problems: string[] = [];
  const dirs: Array<{ name: string; scenario: string; timestamp: string }> = [];
  for (const entry of await readdir(outDir, { withFileTypes: true })) {
    const match = entry.isDirectory() ? RESULT_DIR_RE.exec(entry.name) : null;
    if (match?.[1] !== undefined && match[2] !== undefined) {
      dirs.push({ name: entry.name, scenario: match[1], timestamp: match[2] });
    }
  }
  // Run order (the timestamp sorts lexicographically).
  dirs.sort((a, b) => a.timestamp.localeCompare(b.timestamp) || a.name.localeCompare(b.name));
  for (const { name, scenario } of dirs) {
    try {
      const parsed: unknown = JSON.parse(await readFile(join(outDir, name, 'checks.json'), 'utf8'));
      if (!Array.isArray(parsed)) throw new Error('checks.json is not an array');
      const checks = parsed.map((c) => toCheck(scenario, c));
      if (checks.some((c) => c === undefined)) throw new Error('checks.json has malformed entries');
      results.set(scenario, [...(results.get(scenario) ?? []), ...(checks as ConformanceCheck[])]);
    } catch (err) {
      problems.push(`${scenario}: unreadable results (${err instanceof Error ? err.message : String(err)})`);
    }
  }
  return { results, problems };
}

/** Scenario names the suite announced it would run (`=== Running scenario: X ===`). */
function announcedScenarios(output: string): string[] {
  return [...output.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map((m) => m[1] ?? '');
}

export async function runConformance(url: string, options: ConformanceOptions = {}): Promise<ConformanceResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  const outDir = await mkdtemp(join(tmpdir(), 'thv-conformance-'));
  try {
    const runs: Array<{ args: string[]; expect: string[] | 'announced' }> =
      options.scenarios && options.scenarios.length > 0
        ? options.scenarios.map((s) => ({ args: ['--scenario', s], expect: [s] }))
        : [{ args: ['--suite', options.suite ?? 'all'], expect: 'announced' }];

    let raw = '';
    let exitCode: number | null = 0;
    let timedOut = false;
    const expected: string[] = [];
    const synthetic: string[] = [];

    for (const run of runs) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        timedOut = true;
        synthetic.push(`conformance: timed out after ${timeoutMs} ms before running ${run.args.join(' ')}`);
        if (run.expect !== 'announced') expected.push(...run.expect);
        continue;
      }
      const outcome = await runConformanceCli(['server', '--url', url, ...run.args, '-o', outDir], remaining, options.env);
      raw += outcome.output;
      if (outcome.exitCode !== 0 || exitCode === 0) exitCode = outcome.exitCode;
      if (outcome.timedOut) {
        timedOut = true;
        synthetic.push(`conformance: timed out after ${timeoutMs} ms (${run.args.join(' ')})`);
      } else if (outcome.exitCode === null) {
        synthetic.push(`conformance: suite process was killed by a signal (${run.args.join(' ')})`);
      }
      if (run.expect === 'announced') {
        const announced = announcedScenarios(outcome.output);
        const count = /Running \S+ suite \((\d+) scenarios\)/.exec(outcome.output)?.[1];
        if (!outcome.timedOut && (count === undefined || announced.length === 0)) {
          synthetic.push(`conformance: the suite did not start (exit code ${String(outcome.exitCode)})`);
        } else if (!outcome.timedOut && Number(count) !== announced.length) {
          synthetic.push(`conformance: suite announced ${count} scenarios but ran ${announced.length}`);
        }
        expected.push(...announced);
      } else {
        expected.push(...run.expect);
      }
    }

    const { results, problems } = await readResults(outDir);
    synthetic.push(...problems);
    for (const scenario of expected) {
      if (!results.has(scenario)) synthetic.push(`${scenario}: no results recorded (scenario did not run or crashed)`);
    }

    const checks = [...results.values()].flat();
    const failing = checks.filter((c) => c.status === 'FAILURE');
    const passed = checks.filter((c) => c.status === 'SUCCESS').length;
    const failures = failing.map((c) => `${c.scenario}: ${c.id}: ${c.errorMessage ?? c.description}`);
    failures.push(...synthetic);
    if (checks.length === 0 && failures.length === 0) failures.push('conformance: no checks were recorded');
    if (exitCode !== 0 && failures.length === 0) {
      failures.push(`conformance: suite exited with code ${String(exitCode)} although no check failed`);
    }
    const failed = failures.length;
    return {
      passed,
      failed,
      total: passed + failed,
      failures,
      warnings: checks
        .filter((c) => c.status === 'WARNING')
        .map((c) => `${c.scenario}: ${c.id}: ${c.errorMessage ?? c.description}`),
      checks,
      scenarios: [...results.keys()],
      raw,
      exitCode,
      timedOut,
    };
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

/** Lists the suite's server scenario names (`conformance list --server`). */
export async function listServerScenarios(timeoutMs = 120_000): Promise<string[]> {
  const { output, exitCode, timedOut } = await runConformanceCli(['list', '--server'], timeoutMs);
  if (exitCode !== 0 || timedOut) throw new Error(`conformance list failed (exit ${String(exitCode)}):\n${output}`);
  const names = [...output.matchAll(/^\s+- (\S+)(?: \[[^\]]*\])?$/gm)].map((m) => m[1] ?? '');
  if (names.length === 0) throw new Error(`conformance list printed no scenarios:\n${output}`);
  return names;
}
