// Types for fleet.mjs, so test/fleet.test.ts type-checks against the script's modules.
import type { Postgres } from './postgres.mjs';

export interface Instance {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly pid: number;
  alive(): boolean;
  output(): string;
  /** SIGTERM; resolves to the exit code (or the signal's name). */
  terminate(): Promise<number | string | null>;
  /** SIGKILL; resolves to Date.now() when its exit was seen. */
  kill(): Promise<number>;
  stop(): Promise<void>;
}

export interface RestartStep {
  name: string;
  exitCode: number | string | null;
  oldPid: number;
  newPid: number;
  outMs: number;
  exitedMs: number;
  backMs: number;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Fleet {
  readonly dir: string;
  /** nginx's origin, also the instances' AUTH_URL. */
  readonly origin: string;
  readonly postgres: Postgres;
  readonly env: Readonly<Record<string, string>>;
  readonly instances: Instance[];
  users(args: string[], stdin?: string): Promise<CliResult>;
  addUser(email: string, password: string): Promise<CliResult>;
  restart(index: number): Promise<RestartStep>;
  /** SIGKILL; resolves to Date.now() when its exit was seen. */
  kill(index: number): Promise<number>;
  startAgain(index: number): Promise<Instance>;
  stop(): Promise<void>;
}

export function fleetUnavailable(): string | undefined;
export const instanceNames: readonly string[];
export const fleetEmailMaxFailures: number;
export function startFleet(options?: {
  instances?: number;
  env?: Record<string, string>;
  keepalive?: number;
  log?: (line: string) => void;
}): Promise<Fleet>;
