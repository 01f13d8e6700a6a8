import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether a program runs at all (`--version`-style probe); false when it is not installed. */
export function canRun(command: string, args: string[]): boolean {
  const probe = spawnSync(command, args, { stdio: 'ignore', timeout: 10_000 });
  return probe.error === undefined && probe.status === 0;
}

/** The kernel's range of ephemeral ports (Linux), else the IANA dynamic range. */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = fs
      .readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low as number, high as number];
  } catch {
    // Not Linux: assume the IANA dynamic range.
  }
  return [49152, 65535];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port free on 127.0.0.1 right now, for a server told its port (by environment or file), taken
 * below the kernel's ephemeral range. A port of that range (the kernel's pick for port 0) may be
 * handed meanwhile to any socket on the machine: another suite's server on port 0, or any
 * outgoing connection's local end. Under `npm test`'s four workers that happened between the
 * pick and a guide's `npm start` (EADDRINUSE). Ports below the range are never handed out so.
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const floor = Math.min(20000, Math.max(1024, low - 10000));
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = floor + Math.floor(Math.random() * (low - floor));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found between ${floor} and ${low - 1}`);
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface ServerProcess {
  pid: number;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts a server process and resolves once it accepts connections on 127.0.0.1:`port`.
 * Rejects, with its output, if it exits first or does not listen within `timeoutMs`.
 */
export async function startServerProcess(
  command: string,
  args: string[],
  options: { port: number; cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<ServerProcess> {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      output += String(error);
      exited = true;
      resolve();
    });
    child.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  const stop = async (graceMs = 5_000) => {
    if (exited) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exit;
    clearTimeout(killer);
  };
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  while (!(await accepts(options.port))) {
    if (exited || Date.now() > deadline) {
      await stop(0);
      throw new Error(`${command} did not listen on ${options.port}:\n${output}`);
    }
    await sleep(50);
  }
  if (child.pid === undefined) throw new Error(`${command} has no pid`);
  return { pid: child.pid, output: () => output, stop };
}
