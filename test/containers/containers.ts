// What every container check shares: the image under test, the docker CLI, waits on health and
// status, a session read, and `check`, which names a check and records its printed detail and
// figures for the reporter (reporter.ts prints them as scripts/containers.sh always has).
//
// Every container runs on the host's network on loopback (the engine scripts/containers.sh
// starts has no bridge), on ports chosen here; each file removes what it started.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { Client, sessionCookieName } from '../helpers/client.ts';

export { sleep };

declare module 'vitest' {
  interface TaskMeta {
    /** Printed after the check's name when it passes. */
    detail?: string;
    /** Merged, in check order, into the `figures:` line. */
    figures?: Record<string, unknown>;
  }
}

/** The image scripts/containers.sh built (GATEHOUSE_IMAGE), e.g. `gatehouse:ci`. */
export const image = process.env.GATEHOUSE_IMAGE ?? '';
if (image === '') {
  throw new Error('GATEHOUSE_IMAGE is not set: run these checks through scripts/containers.sh');
}

/** A prefix for every container, volume and project name this process makes. */
export const run = `ghci${process.pid}`;
export const password = 'correct horse battery staple';

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command; resolves with its output, or rejects with its stderr in the message. */
export function sh(
  command: string,
  args: string[],
  {
    input,
    env,
    allowFail = false,
  }: { input?: string; env?: Record<string, string>; allowFail?: boolean } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 && !allowFail) {
        reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
      } else resolve({ code, stdout: stdout.trim(), stderr: stderr.trim() });
    });
    // A command that reads no input may exit before its stdin is written (EPIPE).
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(input ?? '');
  });
}

export const docker = (...args: string[]): Promise<Ran> => sh('docker', args);

// Below Linux's ephemeral range (32768 and up): a port from there can be taken by any outgoing
// connection meanwhile, such as a replica's own connection to PostgreSQL (seen in CI: "PORT
// 32902 ... is in use").
let nextPort = 20000 + Math.floor(Math.random() * 12000);
/** A port for a container to listen on (host network, 127.0.0.1). */
export const port = (): number => (nextPort += 1);

/**
 * One check: a vitest test whose body may return a detail to print after its name and record
 * figures with `figures(...)`. The checks of a file build on each other's state, in order.
 */
export function check(
  name: string,
  body: (figures: (values: Record<string, unknown>) => void) => Promise<string | void>,
  timeoutMs = 300_000,
): void {
  it(
    name,
    async ({ task }) => {
      const detail = await body((values) => {
        task.meta.figures = { ...task.meta.figures, ...values };
      });
      if (detail) task.meta.detail = detail;
    },
    timeoutMs,
  );
}

/** Waits until `docker inspect` reports the container healthy; returns the seconds taken. */
export async function waitHealthy(container: string, timeoutMs = 90_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const { stdout } = await sh(
      'docker',
      [
        'inspect',
        '-f',
        '{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}',
        container,
      ],
      { allowFail: true },
    );
    if (stdout.endsWith('healthy') && !stdout.endsWith('unhealthy')) {
      return (Date.now() - started) / 1000;
    }
    if (stdout.startsWith('exited') || stdout.endsWith('unhealthy')) {
      const logs = await sh('docker', ['logs', '--tail', '20', container], { allowFail: true });
      throw new Error(`${container} is ${stdout}: ${logs.stdout} ${logs.stderr}`);
    }
    if (Date.now() - started > timeoutMs) throw new Error(`${container} not healthy: ${stdout}`);
    await sleep(250);
  }
}

/** Waits until `url` answers `status`; returns the seconds taken. */
export async function waitStatus(url: string, status: number, timeoutMs = 30_000): Promise<number> {
  const started = Date.now();
  let last = 'no answer';
  while (Date.now() - started < timeoutMs) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      last = String(response.status);
      if (response.status === status) return (Date.now() - started) / 1000;
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      last = cause?.code ?? (error as Error).message;
    }
    await sleep(200);
  }
  throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms (last: ${last})`);
}

/** The session a bare session cookie reads as (`null` for none); the read must answer 200. */
export async function readSession(base: string, session: string | undefined): Promise<unknown> {
  const response = await fetch(`${base}/api/auth/session`, {
    headers: { cookie: `authjs.session-token=${session}` },
  });
  expect(response.status, 'session read status').toBe(200);
  return response.json();
}

/** The email of a session answer, if it is one. */
export const emailOf = (body: unknown): unknown =>
  (body as { user?: { email?: unknown } } | null)?.user?.email;

/** The CSRF dance as an Auth.js client does it (the tests' own Client); the session cookie must be set. */
export async function signIn(
  base: string,
  email: string,
): Promise<{ client: Client; session: string }> {
  const client = new Client(base);
  const response = await client.signIn(email, password);
  const { url } = (await response.json()) as { url: string };
  expect(response.status === 200 && !url.includes('error'), `sign-in refused: ${url}`).toBe(true);
  const session = client.cookies.get(sessionCookieName);
  expect(session, 'no session cookie after sign-in').toBeDefined();
  return { client, session: session as string };
}

/** Best-effort removals, newest first, for `afterAll`: the engine itself is stopped afterwards. */
export function cleanups(): { add(step: () => Promise<unknown>): void; run(): Promise<void> } {
  const steps: (() => Promise<unknown>)[] = [];
  return {
    add: (step) => void steps.push(step),
    async run() {
      for (const step of steps.reverse()) {
        try {
          await step();
        } catch {
          // Best effort: scripts/containers.sh removes every container and stops the engine.
        }
      }
    },
  };
}
