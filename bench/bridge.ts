/**
 * stdio-bridge throughput, side by side: `server-everything`'s `echo` tool reached directly over
 * stdio, and through supergateway (--stateful), mcp-proxy and `thv run` over streamable HTTP, and
 * `thv run` again with OpenTelemetry export (sampling 0.1) and the audit log on (`thv-obs`). One
 * session per contender, N connections, contenders measured one after another in one run.
 *
 *   node --import tsx bench/bridge.ts [--duration 10] [--connections 16] [--warmup 1] [--rounds 3]
 *     [--only direct,direct-sdk,supergateway,mcp-proxy,thv,thv-obs] [--json] [--assert] [--require thv]
 *     [--peer-logs] [--thv "<command prefix>"]
 *
 * See bench/README.md for what is measured and how.
 */
import { createReadStream, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ECHO_MESSAGE,
  ECHO_TEXT,
  PROTOCOL_VERSION,
  closeSession,
  isEchoResult,
  openSession,
  runLoad,
  warmUp,
  type LoadClient,
  type LoadResult,
  type RpcEnvelope,
} from './lib/mcp-http.js';
import {
  freePort,
  killAllGroupsSync,
  killGroup,
  spawnGroup,
  tailFile,
  waitForPort,
  withTimeout,
  type Group,
} from './lib/proc.js';
import { startCpuProbe, type CpuProbe, type CpuSplit } from './lib/cpu.js';
import { closedLoop, type LatencySummary } from './lib/stats.js';
import { LeanStdioClient } from './lib/stdio-client.js';
import { startOtlpSink, type OtlpSink } from './lib/otlp-sink.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'node_modules', '.bin');
const SERVER_BIN = path.join(BIN, 'mcp-server-everything');

const CONTENDERS = ['direct', 'direct-sdk', 'supergateway', 'mcp-proxy', 'min-bridge', 'thv', 'thv-obs'] as const;
type ContenderId = (typeof CONTENDERS)[number];

const LABELS: Record<ContenderId, string> = {
  direct: 'direct stdio (lean client)',
  'direct-sdk': 'direct stdio (SDK Client)',
  supergateway: 'supergateway --stateful',
  'mcp-proxy': 'mcp-proxy',
  'min-bridge': 'minimal bridge (reference)',
  thv: 'thv run (stdio bridge)',
  'thv-obs': 'thv run + OTel 0.1 + audit',
};

/** The thv contenders: both start `thv run`; thv-obs adds telemetry and audit (see obsArgs). */
type ThvId = 'thv' | 'thv-obs';
type HttpId = 'supergateway' | 'mcp-proxy' | 'min-bridge' | ThvId;
const isThv = (id: ContenderId): id is ThvId => id === 'thv' || id === 'thv-obs';

/**
 * thv-obs exports metrics every 5 s instead of ToolHive's 60 s default so that metric exports also
 * happen inside a measured window (the conservative case).
 */
const OBS_METRIC_EXPORT_INTERVAL_MS = 5000;

/** Length of one measured window of --paired (s). */
const PAIRED_WINDOW_S = 1;

const LOAD_AT_START = os.loadavg()[0] ?? NaN;

/** Cores used by unrelated processes above which a measurement is flagged as disturbed. */
const OTHER_CPU_WARN = 0.25;

/** Phase deadlines (ms). */
const LIMITS = {
  spawnListen: 20_000,
  handshake: 10_000,
  stdioInit: 10_000,
  drain: 5_000,
  teardown: 10_000,
} as const;

// ---- options ----

interface Options {
  duration: number;
  connections: number;
  warmup: number;
  /** Every contender is measured once per round; the order flips each round; medians are reported. */
  rounds: number;
  only: ContenderId[];
  json: boolean;
  assert: boolean;
  require: ContenderId[];
  peerLogs: boolean;
  /** Command prefix that starts thv (default: node bin/thv.js). */
  thv: string[] | undefined;
  /** Extra `thv run` flags (e.g. telemetry and audit, to measure their overhead). */
  thvArgs: string[];
  /** The HTTP load generator: the lean client (default) or autocannon. */
  client: LoadClient;
  /** thv and thv-obs measured in alternating windows within each round (see measurePaired). */
  paired: boolean;
  /** What thv-obs adds to thv: both (default), or only the audit log or only OpenTelemetry. */
  obs: ObsPart;
}

const USAGE = `usage: node --import tsx bench/bridge.ts [options]
  --duration <s>       measured seconds per contender (default 10)
  --connections <n>    connections / requests in flight (default 16)
  --warmup <s>         warm-up seconds per contender, not measured (default 1)
  --rounds <n>         rounds; each measures every contender, order flipped every round; the
                       report gives each contender's median round and each ratio's median (default 3)
  --only <list>        comma list of ${CONTENDERS.join(',')} (default: all)
  --json               also write bench/results/bridge-<timestamp>.json
  --assert             exit 1 when a target ratio is missed
  --require <list>     exit 1 when one of these contenders could not be measured (e.g. thv)
  --peer-logs          run supergateway at its default log level (info: logs every message)
  --client <name>      HTTP load generator: lean (default; bench/lib/lean-http.ts, as little work
                       per response as the direct contender's stdio client) or autocannon
  --thv <command>      how to start thv, split on spaces (default: "node bin/thv.js"); e.g.
                       --thv "node --import tsx src/cli/main.ts"
  --paired             measure thv and thv-obs in the same round, both running, in alternating 1 s
                       windows (${'`'}--duration${'`'} seconds each in all): the machine's drift weighs on both alike
  --obs <part>         what thv-obs adds: both (default), audit or otel (to see what each costs;
                       the 0.80 target is for both)
  --thv-args <flags>   extra flags for \`thv run\` (both thv and thv-obs), split on spaces; e.g.
                       --thv-args="--authz-config policies.json"
  thv-obs is \`thv run\` with --enable-audit (log file in the run's temp dir), OTLP/HTTP export of
  traces and metrics to an in-process sink that discards them, and --otel-sampling-rate 0.1`;

function contenderList(value: string | undefined, flag: string): ContenderId[] {
  if (value === undefined || value === '') return [];
  const ids = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const id of ids) {
    if (!(CONTENDERS as readonly string[]).includes(id)) throw new Error(`${flag}: unknown contender "${id}"`);
  }
  return ids as ContenderId[];
}

function positive(value: string | undefined, fallback: number, flag: string, integer: boolean): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new Error(`${flag}: expected a positive ${integer ? 'integer' : 'number'}, got "${value}"`);
  }
  return n;
}

function parseOptions(argv: string[]): Options | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      connections: { type: 'string' },
      warmup: { type: 'string' },
      rounds: { type: 'string' },
      only: { type: 'string' },
      json: { type: 'boolean', default: false },
      assert: { type: 'boolean', default: false },
      require: { type: 'string' },
      'peer-logs': { type: 'boolean', default: false },
      thv: { type: 'string' },
      'thv-args': { type: 'string' },
      client: { type: 'string' },
      paired: { type: 'boolean', default: false },
      obs: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help === true) return 'help';
  const only = contenderList(values.only, '--only');
  return {
    duration: positive(values.duration, 10, '--duration', false),
    connections: positive(values.connections, 16, '--connections', true),
    warmup: positive(values.warmup, 1, '--warmup', false),
    rounds: positive(values.rounds, 3, '--rounds', true),
    only: only.length > 0 ? only : [...CONTENDERS],
    json: values.json === true,
    assert: values.assert === true,
    require: contenderList(values.require, '--require'),
    peerLogs: values['peer-logs'] === true,
    thv: values.thv === undefined ? undefined : values.thv.split(/\s+/).filter((s) => s !== ''),
    thvArgs: (values['thv-args'] ?? '').split(/\s+/).filter((s) => s !== ''),
    client: loadClient(values.client),
    paired: values.paired === true,
    obs: obsPart(values.obs),
  };
}

function obsPart(value: string | undefined): ObsPart {
  if (value === undefined || value === 'both' || value === 'audit' || value === 'otel') return value ?? 'both';
  throw new Error(`--obs: expected both, audit or otel, got "${value}"`);
}

function loadClient(value: string | undefined): LoadClient {
  if (value === undefined || value === 'lean' || value === 'autocannon') return value ?? 'lean';
  throw new Error(`--client: expected lean or autocannon, got "${value}"`);
}

// ---- results ----

interface Measured {
  id: ContenderId;
  label: string;
  status: 'measured';
  /** Good (echoed, 2xx) responses per second over the measured window. */
  rps: number;
  good: number;
  /** Everything that was not a good response: connection errors, timeouts, non-2xx, bad 2xx. */
  errors: number;
  detail: Record<string, unknown>;
  seconds: number;
  latencyMs: LatencySummary;
  /** How responses arrived: stdio lines, JSON bodies or SSE streams. */
  answers: 'stdio' | 'json' | 'sse' | 'mixed';
  /** CPU use during the measured window, in cores (Linux only). */
  cpu?: CpuSplit;
  warnings: string[];
}

interface Unmeasured {
  id: ContenderId;
  label: string;
  status: 'unavailable' | 'failed';
  reason: string;
}

type Outcome = Measured | Unmeasured;

class Unavailable extends Error {}

// ---- direct stdio ----

async function measureDirectLean(opts: Options): Promise<Measured> {
  const client = LeanStdioClient.spawn(SERVER_BIN, []);
  try {
    await withTimeout(client.initialize(PROTOCOL_VERSION), LIMITS.stdioInit, 'stdio initialize');
    const params = { name: 'echo', arguments: { message: ECHO_MESSAGE } };
    const cpu = cpuWindow({ pgids: [client.group.pid] });
    const loop = await closedLoop({
      concurrency: opts.connections,
      warmupMs: opts.warmup * 1000,
      durationMs: opts.duration * 1000,
      drainMs: LIMITS.drain,
      call: async () => isEchoResult((await client.request('tools/call', params)) as RpcEnvelope),
      onWindow: cpu.onWindow,
    });
    const warnings: string[] = [];
    if (loop.stuck > 0) warnings.push(`${loop.stuck} requests never answered`);
    if (client.junkLines > 0) warnings.push(`${client.junkLines} non-JSON lines on stdout`);
    return {
      id: 'direct',
      label: LABELS.direct,
      status: 'measured',
      rps: loop.good / loop.seconds,
      good: loop.good,
      errors: loop.errors,
      detail: { failedCalls: loop.errors },
      seconds: loop.seconds,
      latencyMs: loop.latency,
      answers: 'stdio',
      ...cpu.result(),
      warnings,
    };
  } finally {
    await client.close();
  }
}

async function measureDirectSdk(opts: Options): Promise<Measured> {
  const transport = new StdioClientTransport({ command: SERVER_BIN, args: [], stderr: 'ignore' });
  const client = new Client({ name: 'thv-bench', version: '0.0.0' });
  try {
    await withTimeout(client.connect(transport), LIMITS.stdioInit, 'SDK connect');
    const cpu = cpuWindow({ pids: transport.pid === null ? [] : [transport.pid] });
    const loop = await closedLoop({
      concurrency: opts.connections,
      warmupMs: opts.warmup * 1000,
      durationMs: opts.duration * 1000,
      drainMs: LIMITS.drain,
      call: async () => {
        const res = await client.callTool({ name: 'echo', arguments: { message: ECHO_MESSAGE } }, undefined, {
          timeout: 10_000,
        });
        const content = res.content as Array<{ type?: string; text?: string }> | undefined;
        return Array.isArray(content) && content.some((c) => c.text === ECHO_TEXT);
      },
      onWindow: cpu.onWindow,
    });
    return {
      id: 'direct-sdk',
      label: LABELS['direct-sdk'],
      status: 'measured',
      rps: loop.good / loop.seconds,
      good: loop.good,
      errors: loop.errors,
      detail: { failedCalls: loop.errors },
      seconds: loop.seconds,
      latencyMs: loop.latency,
      answers: 'stdio',
      ...cpu.result(),
      warnings: loop.stuck > 0 ? [`${loop.stuck} requests never answered`] : [],
    };
  } finally {
    await withTimeout(client.close(), LIMITS.teardown, 'SDK close').catch(() => undefined);
  }
}

/** A CPU probe bound to a closed loop's measured window. */
function cpuWindow(target: { pgids?: number[]; pids?: number[] }): {
  onWindow: (edge: 'start' | 'end') => void;
  result: () => { cpu?: CpuSplit };
} {
  let probe: CpuProbe | undefined;
  let split: CpuSplit | undefined;
  return {
    onWindow: (edge) => {
      if (edge === 'start') probe = startCpuProbe(target);
      else split = probe?.stop();
    },
    result: () => (split === undefined ? {} : { cpu: split }),
  };
}

// ---- HTTP contenders ----

interface Launch {
  command: string;
  args: string[];
  /** Path of the MCP endpoint on the proxy port. */
  endpoint: string;
}

/** What thv-obs needs besides the plain thv flags: where its audit log goes and the OTLP sink. */
interface ObsSetup {
  auditLog: string;
  auditConfig: string;
  sink: OtlpSink;
}

/** The telemetry + audit flags of thv-obs (`--obs` picks one of the two, to see what each costs). */
function obsArgs(obs: ObsSetup, which: ObsPart): string[] {
  const audit = ['--enable-audit', '--audit-config', obs.auditConfig];
  const otel = [
    '--otel-endpoint',
    obs.sink.url,
    '--otel-insecure',
    '--otel-sampling-rate',
    '0.1',
    '--otel-tracing-enabled',
    '--otel-metrics-enabled',
  ];
  return which === 'audit' ? audit : which === 'otel' ? otel : [...audit, ...otel];
}

type ObsPart = 'both' | 'audit' | 'otel';

function launchFor(id: HttpId, port: number, opts: Options, obs?: ObsSetup): Launch {
  switch (id) {
    case 'supergateway':
      return {
        command: path.join(BIN, 'supergateway'),
        args: [
          '--stdio',
          SERVER_BIN,
          '--outputTransport',
          'streamableHttp',
          '--stateful',
          '--port',
          String(port),
          ...(opts.peerLogs ? [] : ['--logLevel', 'none']),
        ],
        endpoint: '/mcp',
      };
    case 'mcp-proxy':
      return {
        command: path.join(BIN, 'mcp-proxy'),
        args: ['--port', String(port), '--host', '127.0.0.1', '--', SERVER_BIN],
        endpoint: '/mcp',
      };
    case 'min-bridge':
      return {
        command: process.execPath,
        args: [path.join(ROOT, 'bench', 'lib', 'min-bridge.mjs'), '--proxy-port', String(port), SERVER_BIN],
        endpoint: '/mcp',
      };
    case 'thv':
    case 'thv-obs': {
      let prefix = opts.thv;
      if (prefix === undefined) {
        const entry = path.join(ROOT, 'bin', 'thv.js');
        const built = path.join(ROOT, 'dist', 'cli', 'thv.js');
        if (!existsSync(entry)) throw new Unavailable(`${path.relative(ROOT, entry)} does not exist`);
        if (!existsSync(built)) throw new Unavailable(`${path.relative(ROOT, built)} is not built (npm run build)`);
        prefix = [process.execPath, entry];
      }
      const [command = process.execPath, ...rest] = prefix;
      return {
        command,
        args: [
          ...rest,
          'run',
          '--runtime',
          'process',
          '--foreground',
          '--transport',
          'stdio',
          '--proxy-port',
          String(port),
          ...(id === 'thv-obs' && obs !== undefined ? obsArgs(obs, opts.obs) : []),
          ...opts.thvArgs,
          SERVER_BIN,
        ],
        endpoint: '/mcp',
      };
    }
  }
}

/** Lines in a file (0 when it does not exist); streamed, the audit log of a long run is large. */
async function countLines(file: string): Promise<number> {
  if (!existsSync(file)) return 0;
  let lines = 0;
  for await (const chunk of createReadStream(file)) {
    const buf = chunk as Buffer;
    for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) lines++;
  }
  return lines;
}

/** Starts the OTLP sink and writes the audit configuration of one thv-obs measurement. */
async function setUpObs(logDir: string): Promise<ObsSetup> {
  const sink = await startOtlpSink();
  const stamp = `${Date.now()}-${process.hrtime.bigint() % 1000000n}`;
  const auditLog = path.join(logDir, `thv-obs-audit-${stamp}.jsonl`);
  const auditConfig = path.join(logDir, `thv-obs-audit-${stamp}.json`);
  // ToolHive's audit.DefaultConfig() (what --enable-audit alone uses) plus a log file.
  writeFileSync(auditConfig, JSON.stringify({ detectApplicationErrors: true, maxDataSize: 1024, logFile: auditLog }) + '\n');
  return { auditLog, auditConfig, sink };
}

/** An HTTP contender started, with its session open. */
interface Running {
  id: HttpId;
  group: Group;
  session: Awaited<ReturnType<typeof openSession>>;
  launch: Launch;
  obs: ObsSetup | undefined;
  fail: (what: string, err: unknown) => never;
  stopped: boolean;
}

/** Starts a contender and opens its session; on failure everything it started is stopped. */
async function startHttp(id: HttpId, opts: Options, logDir: string): Promise<Running> {
  const port = await freePort();
  const obs = id === 'thv-obs' ? await setUpObs(logDir) : undefined;
  let launch: Launch;
  try {
    launch = launchFor(id, port, opts, obs);
  } catch (err) {
    await obs?.sink.close();
    throw err;
  }
  const logFile = path.join(logDir, `${id}.log`);
  const env = obs === undefined ? undefined : { ...process.env, OTEL_METRIC_EXPORT_INTERVAL: String(OBS_METRIC_EXPORT_INTERVAL_MS) };
  const group: Group = spawnGroup(id, launch.command, launch.args, { logFile, cwd: ROOT, ...(env === undefined ? {} : { env }) });
  const url = `http://127.0.0.1:${port}${launch.endpoint}`;
  const fail = (what: string, err: unknown): never => {
    const tail = tailFile(logFile, 800);
    const message = `${what}: ${err instanceof Error ? err.message : String(err)}${tail ? `\n      log tail: ${tail.replace(/\n/g, '\n      ')}` : ''}`;
    throw isThv(id) ? new Unavailable(message) : new Error(message);
  };
  try {
    await waitForPort(port, { timeoutMs: LIMITS.spawnListen, group }).catch((err: unknown) => fail('start', err));
    const session = await withTimeout(openSession(url, LIMITS.handshake), LIMITS.handshake * 3, 'handshake').catch(
      (err: unknown) => fail('handshake', err),
    );
    return { id, group, session, launch, obs, fail, stopped: false };
  } catch (err) {
    await stopHttp({ id, group, obs, stopped: false });
    throw err;
  }
}

async function stopHttp(r: Pick<Running, 'id' | 'group' | 'obs' | 'stopped'>): Promise<void> {
  if (r.stopped) return;
  r.stopped = true;
  const { clean } = await killGroup(r.group);
  if (!clean) process.stderr.write(`  (${r.id} needed SIGKILL to stop)\n`);
  await r.obs?.sink.close();
}

/** Closes the session, stops the contender and turns its load results into a Measured outcome. */
async function finishHttp(r: Running, loads: LoadResult[], cpu: CpuSplit | undefined): Promise<Measured> {
  try {
    await closeSession(r.session, 2000);
    const sum = (f: (l: LoadResult) => number): number => loads.reduce((a, l) => a + f(l), 0);
    const good = sum((l) => l.good);
    const seconds = sum((l) => l.seconds);
    const sampled = sum((l) => l.sampled);
    const sampleFailures = sum((l) => l.sampleFailures);
    const statusCodes: Record<string, number> = {};
    for (const l of loads) for (const [code, n] of Object.entries(l.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
    // Latency of the window with the median throughput (percentiles of separate windows do not add up).
    const typical = [...loads].sort((a, b) => a.good / a.seconds - b.good / b.seconds)[(loads.length - 1) >> 1]!;

    const warnings: string[] = [];
    if (sampleFailures > 0) {
      warnings.push(`${sampleFailures}/${sampled} sampled responses did not match: ${loads.find((l) => l.sampleFailureExample)?.sampleFailureExample ?? ''}`);
    }
    if (r.group.hasExited()) warnings.push('process exited during the run');
    let obsDetail: Record<string, unknown> = {};
    if (r.obs !== undefined) {
      // Stop thv first: it flushes its last spans, metrics and audit events on the way out, so the
      // counts below cover the whole run (warm-up included).
      await stopHttp(r);
      const auditEvents = await countLines(r.obs.auditLog);
      obsDetail = { auditLog: r.obs.auditLog, auditEvents, otlp: r.obs.sink.counts() };
      const c = r.obs.sink.counts();
      if (c.traces === 0) warnings.push('the OTLP sink received no trace export');
      if (c.metrics === 0) warnings.push('the OTLP sink received no metric export');
      if (auditEvents < good) warnings.push(`${auditEvents} audit events for ${good} good responses`);
    }
    const json = sum((l) => l.bodies.json);
    const sse = sum((l) => l.bodies.sse);
    return {
      id: r.id,
      label: LABELS[r.id],
      status: 'measured',
      rps: good / seconds,
      good,
      errors: sum((l) => l.errors + l.non2xx + l.bad2xx),
      detail: {
        connectionErrors: sum((l) => l.errors),
        timeouts: sum((l) => l.timeouts),
        non2xx: sum((l) => l.non2xx),
        bad2xx: sum((l) => l.bad2xx),
        statusCodes,
        sampled,
        sampleFailures,
        generatorRps: sum((l) => l.generatorRps * l.seconds) / seconds,
        contentType: r.session.contentType,
        command: [r.launch.command, ...r.launch.args].join(' '),
        ...(loads.length > 1 ? { windows: loads.map((l) => l.good / l.seconds) } : {}),
        ...obsDetail,
      },
      seconds,
      latencyMs: typical.latency,
      answers: json > 0 && sse > 0 ? 'mixed' : sse > 0 ? 'sse' : 'json',
      ...(cpu === undefined ? {} : { cpu }),
      warnings,
    };
  } finally {
    await stopHttp(r);
  }
}

async function measureHttp(id: HttpId, opts: Options, logDir: string): Promise<Measured> {
  const r = await startHttp(id, opts, logDir);
  try {
    await warmUp(r.session, opts.connections, opts.warmup, opts.client).catch((err: unknown) => r.fail('warm-up', err));
    const probe = startCpuProbe({ pgids: [r.group.pid] });
    const load = await runLoad(r.session, { connections: opts.connections, seconds: opts.duration, firstId: 1, client: opts.client });
    return await finishHttp(r, [load], probe.stop());
  } finally {
    await stopHttp(r);
  }
}

/**
 * thv and thv-obs measured together (`--paired`): both run for the whole round, and the measured time
 * is cut into short windows that alternate between them (A B B A A B …), so that the machine's speed,
 * which drifts by tens of percent within seconds on a shared VM, weighs on both alike. Each gets
 * `duration` seconds in all. The idle one costs nothing but its timers.
 */
async function measurePaired(opts: Options, logDir: string, flip: boolean): Promise<[Measured, Measured]> {
  const ids: [HttpId, HttpId] = flip ? ['thv-obs', 'thv'] : ['thv', 'thv-obs'];
  const a = await startHttp(ids[0], opts, logDir);
  let b: Running | undefined;
  try {
    b = await startHttp(ids[1], opts, logDir);
    for (const r of [a, b]) await warmUp(r.session, opts.connections, opts.warmup, opts.client).catch((err: unknown) => r.fail('warm-up', err));
    const windows = Math.max(2, Math.round(opts.duration / PAIRED_WINDOW_S));
    const seconds = opts.duration / windows;
    const loads = new Map<Running, LoadResult[]>([[a, []], [b, []]]);
    const cpus = new Map<Running, CpuSplit[]>([[a, []], [b, []]]);
    let nextId = 1;
    for (let w = 0; w < windows; w++) {
      // A B B A A B …: each contender goes first as often as second.
      const pair = w % 2 === 0 ? [a, b] : [b, a];
      for (const r of pair) {
        const probe = startCpuProbe({ pgids: [r.group.pid] });
        const load = await runLoad(r.session, { connections: opts.connections, seconds, firstId: nextId, client: opts.client });
        nextId += load.good + load.bad2xx + load.non2xx + 1000;
        const cpu = probe.stop();
        loads.get(r)!.push(load);
        if (cpu !== undefined) cpus.get(r)!.push(cpu);
      }
    }
    const meanCpu = (list: CpuSplit[]): CpuSplit | undefined => {
      if (list.length === 0) return undefined;
      const avg = (f: (c: CpuSplit) => number): number => list.reduce((s, c) => s + f(c), 0) / list.length;
      return { machine: avg((c) => c.machine), harness: avg((c) => c.harness), contender: avg((c) => c.contender), other: avg((c) => c.other), cores: list[0]!.cores };
    };
    const first = await finishHttp(a, loads.get(a)!, meanCpu(cpus.get(a)!));
    const second = await finishHttp(b, loads.get(b)!, meanCpu(cpus.get(b)!));
    return flip ? [second, first] : [first, second];
  } finally {
    await stopHttp(a);
    if (b !== undefined) await stopHttp(b);
  }
}

async function measure(id: ContenderId, opts: Options, logDir: string): Promise<Outcome> {
  const budget = (opts.warmup + opts.duration) * 1000 + 90_000;
  try {
    const run =
      id === 'direct'
        ? measureDirectLean(opts)
        : id === 'direct-sdk'
          ? measureDirectSdk(opts)
          : measureHttp(id, opts, logDir);
    return await withTimeout(run, budget, `${id} measurement`);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { id, label: LABELS[id], status: err instanceof Unavailable ? 'unavailable' : 'failed', reason };
  }
}

/** measurePaired with the same deadline and failure handling as measure(). */
async function measurePairedOutcomes(opts: Options, logDir: string, flip: boolean): Promise<Outcome[]> {
  const budget = 2 * (opts.warmup + opts.duration) * 1000 + 120_000;
  try {
    return await withTimeout(measurePaired(opts, logDir, flip), budget, 'paired thv / thv-obs measurement');
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const status = err instanceof Unavailable ? 'unavailable' : 'failed';
    return (['thv', 'thv-obs'] as const).map((id) => ({ id, label: LABELS[id], status, reason }));
  }
}

// ---- reporting ----

interface Ratio {
  name: string;
  value: number | null;
  target: number;
  pass: boolean;
  note?: string;
  /** The ratio in each round that measured both sides. */
  rounds?: number[];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Each ratio is taken within a round (contenders measured minutes apart drift with the machine's other
 * load), then the median over rounds is reported.
 */
function ratios(rounds: Outcome[][], only: readonly ContenderId[]): Ratio[] {
  const pairs: Array<[ContenderId, ContenderId, number]> = [
    ['thv', 'supergateway', 3.0],
    ['thv', 'mcp-proxy', 3.0],
    ['thv', 'direct', 0.4],
  ];
  // Observability overhead (issue 9): only when thv-obs was asked for, so that runs of other subsets
  // report (and --assert) exactly what they did before thv-obs existed.
  if (only.includes('thv-obs')) pairs.push(['thv-obs', 'thv', 0.8]);
  // The architecture's ceiling on this machine, for reading thv / direct: no target.
  if (only.includes('min-bridge')) pairs.push(['min-bridge', 'direct', 0], ['thv', 'min-bridge', 0]);
  return pairs.map(([subject, other, target]) => {
    const name = `${subject} / ${other}`;
    const perRound: number[] = [];
    let note: string | undefined;
    for (const outcomes of rounds) {
      const byId = new Map(outcomes.map((o) => [o.id, o]));
      const thv = byId.get(subject);
      const peer = byId.get(other);
      if (thv?.status !== 'measured') note = `${subject} not measured`;
      else if (peer?.status !== 'measured') note = `${other} not measured`;
      else if (peer.rps > 0) perRound.push(thv.rps / peer.rps);
    }
    if (perRound.length === 0) return { name, value: null, target, pass: false, note: note ?? 'not measured' };
    const value = median(perRound);
    return { name, value, target, pass: value >= target, rounds: perRound };
  });
}

/** Per contender, the round with the median req/s (or the last failure when no round measured it). */
function medianOutcomes(rounds: Outcome[][], order: readonly ContenderId[]): Outcome[] {
  const result: Outcome[] = [];
  for (const id of order) {
    const all = rounds.flatMap((r) => r.filter((o) => o.id === id));
    const measured = all.filter((o): o is Measured => o.status === 'measured').sort((a, b) => a.rps - b.rps);
    const pick = measured.length > 0 ? measured[(measured.length - 1) >> 1] : all[all.length - 1];
    if (pick !== undefined) result.push(pick);
  }
  return result;
}

function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length))) ?? [];
  return rows
    .map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join('  '))
    .join('\n');
}

function report(outcomes: Outcome[], rs: Ratio[], opts: Options): string {
  const direct = outcomes.find((o): o is Measured => o.id === 'direct' && o.status === 'measured');
  const rows: string[][] = [
    ['contender', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'vs direct', 'answers', 'CPU self/load/other'],
  ];
  for (const o of outcomes) {
    if (o.status !== 'measured') {
      rows.push([o.label, '-', '-', '-', '-', '-', o.status === 'unavailable' ? 'not available' : 'FAILED', '-']);
      continue;
    }
    rows.push([
      o.label,
      fmt(o.rps),
      fmt(o.latencyMs.p50, 2),
      fmt(o.latencyMs.p99, 2),
      String(o.errors),
      direct !== undefined && direct.rps > 0 ? fmt(o.rps / direct.rps, 2) : '-',
      o.answers,
      o.cpu === undefined ? '-' : `${fmt(o.cpu.contender, 2)}/${fmt(o.cpu.harness, 2)}/${fmt(o.cpu.other, 2)}`,
    ]);
  }
  const lines = [
    `stdio bridge throughput: server-everything echo, ${opts.connections} in flight, one session, ` +
      `${opts.warmup}s warm-up + ${opts.duration}s measured per contender${opts.paired ? ' (thv and thv-obs in alternating 1 s windows)' : ''}, median of ${opts.rounds} rounds, ` +
      `HTTP load from ${opts.client === 'lean' ? 'the lean client' : 'autocannon'} ` +
      `(node ${process.version}, ${os.cpus().length} CPUs, load average ${fmt(LOAD_AT_START, 2)} at start)`,
    '',
    table(rows),
    '',
    'req/s: good responses (2xx carrying the echoed result) per second; errors: everything else.',
    'CPU self/load/other: cores used by the contender (proxy + server) / by the load generator (this process) /\n' +
      '  by processes outside the benchmark.',
  ];
  const notes: string[] = [];
  for (const o of outcomes) {
    if (o.status !== 'measured') notes.push(`${o.label}: ${o.status === 'unavailable' ? 'not available' : 'failed'}: ${o.reason}`);
    else {
      for (const w of o.warnings) notes.push(`${o.label}: warning: ${w}`);
      if (o.cpu !== undefined && o.cpu.other > OTHER_CPU_WARN) {
        notes.push(
          `${o.label}: warning: other processes used ${fmt(o.cpu.other, 2)} of ${o.cpu.cores} cores during the window; not comparable`,
        );
      }
    }
  }
  if (notes.length > 0) lines.push('', ...notes);
  lines.push('', 'targets:');
  lines.push(
    table(
      rs.map((r) => [
        `  ${r.name}`,
        r.value === null ? 'n/a' : fmt(r.value, 2),
        r.target > 0 ? `(target >= ${r.target.toFixed(2)})` : '(reference)',
        r.rounds === undefined ? '' : `rounds: ${r.rounds.map((v) => fmt(v, 2)).join(' ')}`,
        r.target === 0 ? '' : r.pass ? 'PASS' : r.value === null ? `FAIL (${r.note ?? 'not measured'})` : 'FAIL',
      ]),
    ),
  );
  return lines.join('\n');
}

function writeJson(outcomes: Outcome[], rounds: Outcome[][], rs: Ratio[], opts: Options, startedAt: Date): string {
  const dir = path.join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `bridge-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  const doc = {
    benchmark: 'bridge',
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: {
      node: process.version,
      platform: process.platform,
      arch: process.arch,
      cpus: os.cpus().length,
      loadAverageAtStart: LOAD_AT_START,
    },
    options: opts,
    server: SERVER_BIN,
    results: outcomes,
    rounds,
    ratios: rs,
  };
  writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
  return file;
}

// ---- main ----

async function main(): Promise<number> {
  let opts: Options | 'help';
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!existsSync(SERVER_BIN)) {
    process.stderr.write(`${SERVER_BIN} is missing; run npm install\n`);
    return 2;
  }

  // The whole run stops by itself even if a phase deadline somehow fails to fire.
  const overall = opts.rounds * opts.only.length * ((opts.warmup + opts.duration) * 1000 + 120_000);
  const watchdog = setTimeout(() => {
    process.stderr.write(`bench: overall deadline (${overall} ms) passed, aborting\n`);
    killAllGroupsSync();
    process.exit(3);
  }, overall);
  watchdog.unref();

  const startedAt = new Date();
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'thv-bench-bridge-'));
  const rounds: Outcome[][] = [];
  for (let round = 0; round < opts.rounds; round++) {
    const order = round % 2 === 0 ? opts.only : [...opts.only].reverse();
    const outcomes: Outcome[] = [];
    const pairing = opts.paired && order.includes('thv') && order.includes('thv-obs');
    for (const id of order) {
      if (pairing && isThv(id)) {
        if (outcomes.some((o) => isThv(o.id))) continue;
        process.stderr.write(`bench: round ${round + 1}/${opts.rounds}: thv and thv-obs, alternating windows ...\n`);
        outcomes.push(...(await measurePairedOutcomes(opts, logDir, id === 'thv-obs')));
        for (const o of outcomes.filter((x) => isThv(x.id))) {
          process.stderr.write(o.status === 'measured' ? `bench:   ${o.id}: ${fmt(o.rps)} req/s\n` : `bench:   ${o.id}: ${o.status}: ${o.reason.split('\n')[0] ?? ''}\n`);
        }
        continue;
      }
      process.stderr.write(`bench: round ${round + 1}/${opts.rounds}: ${LABELS[id]} ...\n`);
      const outcome = await measure(id, opts, logDir);
      process.stderr.write(
        outcome.status === 'measured'
          ? `bench:   ${fmt(outcome.rps)} req/s\n`
          : `bench:   ${outcome.status}: ${outcome.reason.split('\n')[0] ?? ''}\n`,
      );
      outcomes.push(outcome);
    }
    rounds.push(outcomes);
  }
  clearTimeout(watchdog);

  const outcomes = medianOutcomes(rounds, opts.only);
  const rs = ratios(rounds, opts.only);
  process.stdout.write(`\n${report(outcomes, rs, opts)}\n`);
  if (opts.json) process.stdout.write(`\nwrote ${path.relative(ROOT, writeJson(outcomes, rounds, rs, opts, startedAt))}\n`);
  process.stdout.write(`logs: ${logDir}\n`);

  let code = 0;
  const failed = outcomes.filter((o) => o.status === 'failed');
  if (failed.length > 0) code = 1;
  for (const id of opts.require) {
    const o = outcomes.find((x) => x.id === id);
    if (o?.status !== 'measured') {
      process.stderr.write(`bench: required contender ${id} was not measured\n`);
      code = 1;
    }
  }
  if (opts.assert && rs.some((r) => !r.pass)) code = 1;
  return code;
}

process.once('exit', killAllGroupsSync);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAllGroupsSync();
    process.exit(130);
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    killAllGroupsSync();
    process.exitCode = 1;
  },
);
