// The users CLI, run as an operator runs it (`node dist/gatehouse-cli.cjs users …`), against
// the fleet's database; passwords go in on stdin, never in arguments.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { root } from './instance.mjs';
import { track } from './processes.mjs';

/** Resolves to `{ code, stdout, stderr }`; never rejects for a non-zero exit. */
export function runUsers(databaseUrl, args, stdin = '') {
  const child = spawn(
    process.execPath,
    [path.join(root, 'dist/gatehouse-cli.cjs'), 'users', ...args],
    {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: databaseUrl },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk) => (stderr += chunk.toString()));
  const entry = track(child, `users ${args[0]}`);
  child.stdin.end(stdin);
  return entry.exited.then(({ code }) => ({ code, stdout, stderr }));
}

/** Adds a user; rejects with the CLI's own words when it refuses. */
export async function addUser(databaseUrl, email, password) {
  const result = await runUsers(
    databaseUrl,
    ['add', '--email', email, '--password-stdin'],
    password,
  );
  if (result.code !== 0)
    throw new Error(`users add ${email} exited ${result.code}: ${result.stderr}`);
  return result;
}
