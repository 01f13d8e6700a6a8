// Bare argon2id verification, the floor under a sign-in: run in a child pinned to the server's
// core, so it competes for exactly the CPU a sign-in would get; the child reports JSON on stdout.
import { spawn } from 'node:child_process';
import { BenchError, benchMain, log, now, password, pool, root } from './common.ts';
import { childEnv, pinned, setup, track } from './processes.ts';
import { signInConcurrency, signInConcurrentTotal, signInSequential } from './signin.ts';

// Matches src/users/hasher.ts: the hash-only figure must cost what a sign-in costs.
export const argon2Params = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 };

/** The child's side (`main.ts --hash-worker`). */
export async function hashWorker() {
  const { hash, verify } = await import('@node-rs/argon2');
  const stored = await hash(password, argon2Params);
  for (let i = 0; i < 3; i += 1) await verify(stored, password);
  const check = async () => {
    if (!(await verify(stored, password))) throw new Error('argon2 verify returned false');
  };
  let t0 = now();
  for (let i = 0; i < signInSequential; i += 1) await check();
  const sequential = signInSequential / ((now() - t0) / 1000);
  t0 = now();
  await pool(signInConcurrentTotal, signInConcurrency, check);
  const concurrent = signInConcurrentTotal / ((now() - t0) / 1000);
  process.stdout.write(JSON.stringify({ sequential, concurrent }));
  process.exit(0);
}

export async function benchHashOnly() {
  log('hash-only: argon2id verify, sequential and 16 concurrent');
  const [command, args] = pinned(setup.serverCpu, process.execPath, [benchMain, '--hash-worker']);
  const child = track(
    spawn(command, args, { cwd: root, env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (out += chunk));
  const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const { code } = await child.exited;
  clearTimeout(guard);
  if (code !== 0) throw new BenchError(`hash-only worker failed (${code}):\n${out}`);
  return JSON.parse(out);
}
