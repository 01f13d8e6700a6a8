// The machine the bench runs on: which CPUs it may use, what they are, how much of them other
// work took during the run, and what one process costs in CPU time and memory (from /proc).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BenchError } from './common.ts';

export function onPath(command: string): boolean {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((dir) => dir && fs.existsSync(path.join(dir, command)));
}

export function allowedCpus(): number[] {
  try {
    const list = /Cpus_allowed_list:\s*(\S+)/.exec(
      fs.readFileSync('/proc/self/status', 'utf8'),
    )?.[1];
    const cpus: number[] = [];
    for (const range of list?.split(',') ?? []) {
      const [from, to = from] = range.split('-').map(Number);
      for (let cpu = from; cpu <= to; cpu += 1) cpus.push(cpu);
    }
    return cpus;
  } catch {
    return [];
  }
}

/** What the report says about the machine. */
export interface MachineInfo {
  nproc: string;
  cpu: string;
  node: string;
}

export function machineInfo(): MachineInfo {
  const nproc = spawnSync('nproc', { encoding: 'utf8' }).stdout?.trim() || String(os.cpus().length);
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpu;
  } catch {
    // Not Linux: os.cpus() already gave the best name available.
  }
  return { nproc, cpu, node: process.version };
}

let ticksPerSecond: number | undefined;
const clockTick = (): number =>
  (ticksPerSecond ??=
    Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100);

/** Fields of /proc/<pid>/stat after the parenthesised command name (utime is index 11). */
function statFields(pid: number | 'self'): number[] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
}

/**
 * CPU ticks spent machine-wide and by this process tree (reaped children land in cutime/cstime),
 * so the report can say how much of the machine other work took: on a shared box that, not
 * Gatehouse, is often what moves the figures.
 */
/** CPU ticks since boot: the machine's busy and stolen time, and this process tree's own. */
export interface Ticks {
  busy: number;
  steal: number;
  own: number;
}

export function cpuTicks(): Ticks | undefined {
  try {
    const cpu = fs
      .readFileSync('/proc/stat', 'utf8')
      .split('\n', 1)[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const [user, nice, system, , , irq, softirq, steal = 0] = cpu;
    const fields = statFields('self');
    const own = fields[11] + fields[12] + fields[13] + fields[14];
    return { busy: user + nice + system + irq + softirq, steal, own };
  } catch {
    return undefined;
  }
}

/** CPU seconds other processes (and the hypervisor) took during the run. */
export interface OtherLoad {
  otherS: number;
  stealS: number;
  pct: number;
}

export function otherLoad(
  before: Ticks | undefined,
  after: Ticks | undefined,
  wallS: number,
): OtherLoad | undefined {
  if (!before || !after) return undefined;
  const tick = clockTick();
  const cores = allowedCpus().length || os.cpus().length;
  const otherS = Math.max(0, after.busy - before.busy - (after.own - before.own)) / tick;
  const stealS = (after.steal - before.steal) / tick;
  return { otherS, stealS, pct: (otherS / (wallS * cores)) * 100 };
}

/**
 * User + system CPU seconds the live processes `pids` have used so far; NaN when /proc cannot
 * say (not Linux). A process gone in between is counted as 0: callers read it around one run.
 */
export function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = statFields(pid);
      ticks += fields[11] + fields[12];
    } catch {
      if (!fs.existsSync('/proc/self/stat')) return NaN;
      // The process ended (a pooled connection closed): its time is no longer readable.
    }
  }
  return ticks / clockTick();
}

export function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
  if (kb === undefined) throw new BenchError(`no VmRSS for pid ${pid}`);
  return Number(kb) / 1024;
}
