import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether a program runs at all (`--version`-style probe); false when it is not installed. */
export function canRun(command: string, args: string[]): boolean {
  const probe = spawnSync(command, args, { stdio: 'ignore', timeout: 10_000 });
  return probe.error === undefined && probe.status === 0;
}

/** A port free on 127.0.0.1 right now (the kernel's pick), for a server configured by file. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address === null || typeof address === 'string') reject(new Error('no port'));
        else resolve(address.port);
      });
    });
  });
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
