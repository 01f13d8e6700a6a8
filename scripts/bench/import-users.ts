// The speed and memory of `gatehouse users import` (issue 38): a JSON Lines file of 100,000
// users, each with a bcrypt hash, one in ten with a GitHub identity, imported by the built CLI
// into an empty SQLite file and (with TEST_POSTGRES_URL, e.g. under scripts/with-postgres.sh)
// into an empty PostgreSQL database. Printed: the check's and the import's wall time, users per
// second, and the CLI's peak resident memory; then a second run of the file (changes nothing).
//
// Usage: npm run build && node scripts/bench/import-users.ts [USERS]   (about a minute; bounded)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase, postgresUrl } from './postgres.ts';
import { cleanup, installCleanupHandlers, makeTemp } from './processes.ts';

const root = path.dirname(fileURLToPath(new URL('../../package.json', import.meta.url)));
const users = Math.min(Number(process.argv[2] ?? 100_000), 1_000_000);
// One hash for every line: the import reads a hash's format and cost, it verifies none.
const hash = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';

installCleanupHandlers();
const dir = makeTemp('import-bench');
const file = path.join(dir, 'users.jsonl');
const out = fs.createWriteStream(file);
for (let i = 0; i < users; i += 1) {
  const line = {
    id: `cl${i.toString(36).padStart(10, '0')}`,
    email: `user${i}@example.com`,
    name: `User ${i}`,
    emailVerified: '2025-01-01T00:00:00.000Z',
    passwordHash: hash,
    ...(i % 10 === 0 && { identities: [{ provider: 'github', subject: String(1_000_000 + i) }] }),
  };
  if (!out.write(`${JSON.stringify(line)}\n`))
    await new Promise<void>((resolve) => out.once('drain', () => resolve()));
}
await new Promise((resolve) => out.end(resolve));
const megabytes = fs.statSync(file).size / 1024 / 1024;
console.log(`file: ${users} users, ${megabytes.toFixed(1)} MB`);

const preload = path.join(dir, 'peak.cjs');
fs.writeFileSync(
  preload,
  "process.on('exit', () => process.stderr.write(`peak-rss-kb ${process.resourceUsage().maxRSS}\\n`));",
);

/** One CLI run: its wall time, its peak resident memory, and its exit status. */
function run(env: Record<string, string>, args: string[]) {
  return new Promise<{ ms: number; peakMb: number; code: number | null; out: string }>(
    (resolve) => {
      const started = performance.now();
      const child = spawn(
        process.execPath,
        ['--require', preload, path.join(root, 'dist/gatehouse-cli.cjs'), ...args],
        {
          env: {
            PATH: process.env.PATH ?? '',
            AUTH_GITHUB_ID: 'id',
            AUTH_GITHUB_SECRET: 'secret',
            ...env,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        const kb = Number(/peak-rss-kb (\d+)/.exec(text)?.[1] ?? 0);
        resolve({ ms: performance.now() - started, peakMb: kb / 1024, code, out: text });
      });
    },
  );
}

async function measure(label: string, env: Record<string, string>) {
  for (const [step, args] of [
    ['check', ['users', 'import', '--check', file]],
    ['import', ['users', 'import', file]],
    ['second run', ['users', 'import', file]],
  ] as const) {
    const result = await run(env, [...args]);
    if (result.code !== 0) {
      console.log(result.out);
      throw new Error(`${label} ${step} exited ${result.code}`);
    }
    const rate = Math.round(users / (result.ms / 1000));
    console.log(
      `${label.padEnd(10)} ${step.padEnd(10)} ${(result.ms / 1000).toFixed(1).padStart(6)} s  ${String(rate).padStart(7)} users/s  peak ${result.peakMb.toFixed(0)} MB`,
    );
  }
}

try {
  await measure('SQLite', { DATABASE_URL: `file:${path.join(dir, 'bench.db')}` });
  if (postgresUrl !== undefined) {
    const database = await createBenchDatabase(postgresUrl);
    await measure('PostgreSQL', { DATABASE_URL: database.url });
  } else
    console.log('PostgreSQL: skipped (no TEST_POSTGRES_URL; run under scripts/with-postgres.sh)');
} finally {
  await cleanup();
}
