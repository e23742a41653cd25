/**
 * Where the CPU went during a measured window (Linux /proc; elsewhere the probe reports nothing).
 * The machine is small and shared, so the report says how much CPU *other* processes took while a
 * contender was measured: a figure taken while something else was busy is not comparable.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** Kernel clock ticks per second; 100 on every Linux this runs on (`getconf CLK_TCK`). */
const CLK_TCK = 100;

export interface CpuSplit {
  /** All values in cores (1.0 = one CPU fully busy for the whole window). */
  machine: number;
  harness: number;
  contender: number;
  other: number;
  cores: number;
}

function machineBusyTicks(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already inside user)
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
    return user + nice + system + irq + softirq + steal;
  } catch {
    return undefined;
  }
}

/** utime+stime ticks of one process, or undefined when it is gone. */
function processTicks(pid: number): { ppid: number; pgrp: number; ticks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields after "pid (comm) ": state(0) ppid(1) pgrp(2) ... utime(11) stime(12)
    return { ppid: Number(f[1]), pgrp: Number(f[2]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return undefined;
  }
}

/**
 * CPU ticks of every live process in the process groups `pgids` and of their descendants, plus the
 * single `pids`. Descendants count even in a group of their own: thv starts each MCP server in a new
 * process group (so that stopping it stops what it started), and that server is part of the contender.
 */
function contenderTicks(pgids: readonly number[], pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) total += processTicks(pid)?.ticks ?? 0;
  if (pgids.length === 0) return total;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return total;
  }
  const procs = new Map<number, { ppid: number; pgrp: number; ticks: number }>();
  for (const name of entries) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const p = processTicks(Number(name));
    if (p !== undefined) procs.set(Number(name), p);
  }
  const inside = new Map<number, boolean>();
  const isInside = (pid: number, depth = 0): boolean => {
    const known = inside.get(pid);
    if (known !== undefined) return known;
    const p = procs.get(pid);
    const verdict = p !== undefined && (pgids.includes(p.pgrp) || (p.ppid > 1 && depth < 64 && isInside(p.ppid, depth + 1)));
    inside.set(pid, verdict);
    return verdict;
  };
  for (const [pid, p] of procs) if (isInside(pid)) total += p.ticks;
  return total;
}

export interface CpuProbe {
  stop(): CpuSplit | undefined;
}

/**
 * Starts a probe for a contender made of the process groups `pgids` and the single processes
 * `pids`. Processes that exit inside the window take their ticks with them (counted as "other").
 */
export function startCpuProbe(target: { pgids?: readonly number[]; pids?: readonly number[] }): CpuProbe {
  const pgids = target.pgids ?? [];
  const pids = target.pids ?? [];
  const cores = readCores();
  const t0 = performance.now();
  const m0 = machineBusyTicks();
  const h0 = process.cpuUsage();
  const c0 = contenderTicks(pgids, pids);
  return {
    stop(): CpuSplit | undefined {
      const m1 = machineBusyTicks();
      const h = process.cpuUsage(h0);
      const c1 = contenderTicks(pgids, pids);
      const seconds = (performance.now() - t0) / 1000;
      if (m0 === undefined || m1 === undefined || seconds <= 0) return undefined;
      const machine = (m1 - m0) / CLK_TCK / seconds;
      const harness = (h.user + h.system) / 1e6 / seconds;
      const contender = Math.max(0, c1 - c0) / CLK_TCK / seconds;
      return { machine, harness, contender, other: Math.max(0, machine - harness - contender), cores };
    },
  };
}

function readCores(): number {
  try {
    return readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .filter((l) => /^cpu\d+ /.test(l)).length;
  } catch {
    return 0;
  }
}
