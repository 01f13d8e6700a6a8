import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/processes.js';
import { distDir } from '../helpers/spawn.js';

interface Line {
  msg: string;
  path?: string;
  status?: number;
}

/** The built service as `npm start` runs it, in production, its standard output to `logFile`. */
async function startToFile(dataDir: string, logFile: string) {
  const port = await freePort();
  const out = fs.openSync(logFile, 'w');
  const child = spawn(
    process.execPath,
    ['--max-semi-space-size=2', path.join(distDir, 'gatehouse.mjs')],
    {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'production',
        AUTH_SECRET: 'q3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt',
        AUTH_TRUST_HOST: 'true',
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: dataDir,
      },
      stdio: ['ignore', out, 'pipe'],
    },
  );
  fs.closeSync(out);
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const url = `http://127.0.0.1:${port}`;
  // A deadline, not a count of tries: a start on a loaded machine may take many seconds.
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    try {
      if ((await fetch(`${url}/api/health`)).status === 200) break;
    } catch {
      // Not listening yet: poll again.
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return { url, exited, stderr: () => stderr, kill: (s: NodeJS.Signals) => child.kill(s) };
}

function linesOf(logFile: string): Line[] {
  return fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Line);
}

let dir: string;

describe('the access log at a clean stop', () => {
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-log-stop-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('every request answered before and during a SIGTERM drain has its line in the log file', async () => {
    const logFile = path.join(dir, 'out.log');
    const service = await startToFile(path.join(dir, 'data'), logFile);
    // The session and CSRF reads are answered in front of Fastify, the unknown path by Fastify:
    // both writers of access lines.
    const paths = ['/api/auth/session', '/api/auth/csrf', '/api/nothing-here'];
    const total = 3000;
    const stopAfter = 2000;
    let sent = 0;
    let answered = 0;
    const client = async () => {
      while (sent < total) {
        const target = paths[sent % paths.length] as string;
        sent += 1;
        try {
          const response = await fetch(`${service.url}${target}`);
          await response.arrayBuffer();
          answered += 1;
          // The signal arrives while the other clients' requests are still under way.
          if (answered === stopAfter) service.kill('SIGTERM');
        } catch {
          // Refused once the service stopped listening: no answer, so no line is owed.
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, client));
    expect(await service.exited).toBe(0);

    const lines = linesOf(logFile);
    const accessLines = lines.filter((line) => line.msg === 'request');
    expect(answered).toBeGreaterThanOrEqual(stopAfter);
    expect(accessLines).toHaveLength(answered);
    expect(accessLines.filter((line) => line.status === 404)).toHaveLength(
      accessLines.filter((line) => line.path === '/api/nothing-here').length,
    );
    expect(lines.some((line) => line.msg === 'draining: finishing in-flight requests')).toBe(true);
    expect(service.stderr()).toBe('');
  }, 60_000);
});
