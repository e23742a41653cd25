import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { leanLoad } from './lib/lean-http.js';
import { openSession, echoCallBody } from './lib/mcp-http.js';
import { startOtlpSink } from './lib/otlp-sink.js';
const modes = (process.argv[2] ?? 'plain,obs').split(',');
const secs = Number(process.argv[3] ?? 6);
const rounds = Number(process.argv[4] ?? 3);
const freePort = (): Promise<number> => new Promise((r) => { const s = net.createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as net.AddressInfo).port; s.close(() => r(p)); }); });
const cpu = (pid: number) => { try { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10; } catch { return 0; } };
const allKids = (pid: number): number[] => { const out: number[] = []; try { for (const t of readdirSync(`/proc/${pid}/task`)) for (const c of readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)) out.push(c, ...allKids(c)); } catch {} return out; };
const results: Record<string, number[][]> = {};
async function measure(mode: string) {
  const port = await freePort();
  const sink = await startOtlpSink();
  const logDir = mode.includes('shm') ? '/dev/shm' : '/tmp/cp';
  const logFile = `${logDir}/a-${Date.now()}.jsonl`;
  writeFileSync('/tmp/cp/a.json', JSON.stringify({ detectApplicationErrors: !mode.includes('nosniff'), maxDataSize: 1024, logFile }));
  const args: string[] = [];
  if (mode.includes('obs') || mode.includes('audit')) args.push('--enable-audit', '--audit-config', '/tmp/cp/a.json');
  if (mode.includes('obs') || mode.includes('otel')) args.push('--otel-endpoint', sink.url, '--otel-insecure', '--otel-sampling-rate', '0.1', '--otel-tracing-enabled', '--otel-metrics-enabled');
  const child = spawn(process.execPath, [...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.PROF + '/' + mode] : []), 'bin/thv.js', 'run', '--runtime', 'process', '--foreground', '--transport', 'stdio', '--proxy-port', String(port), ...args, './node_modules/.bin/mcp-server-everything'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, OTEL_METRIC_EXPORT_INTERVAL: '5000'} });
  child.stderr!.on('data', () => {});
  let dead = false; child.on('exit', () => { dead = true; });
  const url = `http://127.0.0.1:${port}/mcp`;
  for (;;) { if (dead) throw new Error('thv exited'); try { await fetch(`http://127.0.0.1:${port}/health`); break; } catch { await new Promise((r) => setTimeout(r, 100)); } }
  const session = await openSession(url, 5000);
  let id = 10;
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-06-18', 'Mcp-Session-Id': session.sessionId };
  const run = (s: number) => { let n = 0; return leanLoad({ url, headers, connections: Number(process.env.CONNS ?? 16), seconds: s, timeoutMs: 5000, next: () => { const i = id++; return { id: i, body: echoCallBody(i) }; }, onResponse: () => { n++; } }).then(() => n); };
  await run(1);
  const ks = allKids(child.pid!);
  const p0 = cpu(child.pid!), k0 = ks.map(cpu), self0 = process.cpuUsage();
  const n = await run(secs);
  const p1 = cpu(child.pid!), k1 = ks.map(cpu), self1 = process.cpuUsage(self0);
  const kd = k1.reduce((a, b, i) => a + b - k0[i]!, 0);
  child.kill('SIGTERM'); await new Promise((r) => (dead ? r(0) : child.once('exit', r))); await sink.close();
  rmSync(logFile, { force: true });
  (results[mode] ??= []).push([n / secs, ((p1 - p0) * 1000) / n, (kd * 1000) / n, (self1.user + self1.system) / n]);
  const r = results[mode]!.at(-1)!;
  console.log(`${mode.padEnd(14)} req/s ${r[0]!.toFixed(0).padStart(6)}  proxy µs/req ${r[1]!.toFixed(1)}  server ${r[2]!.toFixed(1)}  client ${r[3]!.toFixed(1)}`);
}
for (let i = 0; i < rounds; i++) for (const m of i % 2 ? [...modes].reverse() : modes) await measure(m);
const med = (a: number[]) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]!; };
const base = med(results[modes[0]!]!.map((r) => r[0]!));
for (const m of modes) { const rs = results[m]!; console.log(`${m.padEnd(14)} median req/s ${med(rs.map((r) => r[0]!)).toFixed(0).padStart(6)} ratio ${(med(rs.map((r) => r[0]!)) / base).toFixed(2)}  proxy µs/req ${med(rs.map((r) => r[1]!)).toFixed(1)}`); }
process.exit(0);
