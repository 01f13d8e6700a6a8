// The process side of following a guide (docs/integrate*.md) from empty folders, shared by
// test/clients/integrate-guide.test.ts and test/examples/follow-guide.ts: each marked command
// runs in bash in its own process group, a server is left running once it listens, and npm
// reaches its registry with the network settings of this environment only.
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { accepts } from './processes.js';

export interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<void>;
}

/** A guide command in bash, in its own process group (npm and nginx start children). */
export function shell(command: string, cwd: string, env: NodeJS.ProcessEnv): Running {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', command], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      output += String(error);
      resolve();
    });
    child.once('exit', () => resolve());
  });
  return { child, output: () => output, exited };
}

/** A guide's server command, left running once it listens on `port` (a minute at most). */
export async function serve(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  port: number,
): Promise<Running> {
  // Else an old server still on the port would pass for this one.
  if (await accepts(port)) throw new Error(`port ${port} is taken before: ${command.trim()}`);
  const server = shell(command, cwd, env);
  const deadline = Date.now() + 60_000;
  while (!(await accepts(port))) {
    if (server.child.exitCode !== null || Date.now() > deadline) {
      await stopGroup(server);
      throw new Error(`${command.trim()} did not listen on ${port}:\n${server.output()}`);
    }
    await sleep(100);
  }
  return server;
}

/** Whether any process of the group `pgid` is left. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGTERM to the command's group; SIGKILL after 5 s. Done when the whole group is gone, not only
 * the shell: a server it started (`next start` under npm) may still be closing its port.
 */
export async function stopGroup(running: Running): Promise<void> {
  const { child } = running;
  if (child.pid === undefined) return;
  const pgid = child.pid;
  if (!groupAlive(pgid)) return;
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {
    return; // the group is gone already
  }
  const deadline = Date.now() + 5_000;
  while (groupAlive(pgid) && Date.now() < deadline) await sleep(50);
  if (groupAlive(pgid)) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // it exited between the two signals
    }
    while (groupAlive(pgid)) await sleep(50);
  }
  await running.exited;
}

/**
 * What npm needs from this environment to reach its registry (a proxy, its certificate
 * authority), and nothing else: Gatehouse's and the suite's own variables stay out.
 */
export function network(): NodeJS.ProcessEnv {
  const wanted =
    /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|(https?|no|all)_proxy|npm_config_(registry|cafile|ca|strict_ssl|proxy|https_proxy|noproxy|cache))$/i;
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => wanted.test(key)));
}

/** An install's output that says the registry was out of reach, not that the guide is wrong. */
export const offline = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|network/i;
