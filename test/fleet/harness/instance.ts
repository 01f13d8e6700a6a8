// One Gatehouse instance of the fleet: the production bundle started as `npm start` starts it
// (V8 flags included), on a loopback port, with the fleet's shared configuration.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { request } from './http.ts';
import { signalAndWait, sleep, track, type Exit } from './processes.ts';
import { startArgs } from '../../../scripts/build/start-command.ts';

export const root = path.resolve(import.meta.dirname, '../../..');

export interface Instance {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly pid: number | undefined;
  alive(): boolean;
  readonly exited: Promise<Exit>;
  output(): string;
  /** SIGTERM (the service drains and exits 0); resolves to the exit code, or the signal. */
  terminate(): Promise<number | string | null>;
  /** SIGKILL: no drain, no cleanup, as a crashed machine would stop it; resolves to when it exited. */
  kill(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts an instance on `port` with `env` (the fleet's shared settings) and resolves once it
 * listens (liveness answers 200); readiness is the controller's business. Rejects with the
 * instance's output if it exits first or does not listen within `timeoutMs`.
 */
export async function startInstance({
  name,
  port,
  env,
  timeoutMs = 20_000,
}: {
  name: string;
  port: number;
  env: Record<string, string>;
  timeoutMs?: number;
}): Promise<Instance> {
  const child = spawn(process.execPath, startArgs(root), {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const entry = track(child, name, { graceMs: 15_000 });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while ((await request(`${url}/api/health`, { timeoutMs: 1000 })).status !== 200) {
    if (!entry.alive() || Date.now() > deadline) {
      await entry.stop();
      throw new Error(`${name} did not start on ${port}:\n${entry.output()}`);
    }
    await sleep(50);
  }
  return {
    name,
    port,
    url,
    pid: child.pid,
    alive: entry.alive,
    exited: entry.exited,
    output: entry.output,
    async terminate() {
      const { code, signal } = await signalAndWait(child, entry.exited, 15_000);
      return code ?? signal;
    },
    async kill() {
      child.kill('SIGKILL');
      return (await entry.exited).at;
    },
    stop: entry.stop,
  };
}
