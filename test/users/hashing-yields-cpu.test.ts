import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultHashNice } from '../../src/config/index.js';
import { Client } from '../helpers/client.js';
import { addUser, password, startGatehouse } from '../helpers/metrics.js';
import type { ServerProcess } from '../helpers/processes.js';

// Thread priorities are read from /proc: Linux only (the suite is skipped elsewhere).
const hasProc = fs.existsSync('/proc/self/task');

/** The nice value of each thread of `pid`, by thread id (/proc/<pid>/task/<tid>/stat). */
function threadNice(pid: number): Map<number, number> {
  const nice = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended while we looked
    }
    // After "pid (comm) ", the fields run from the 3rd (state); nice is the 19th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    nice.set(Number(tid), Number(fields[19 - 3]));
  }
  return nice;
}

describe.skipIf(!hasProc)('password hashing runs below the event loop', () => {
  let dir: string;
  let gatehouse: ServerProcess;
  let base: string;
  const hashConcurrency = 2;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-nice-'));
    await addUser(dir, 'ada@example.com');
    const started = await startGatehouse(dir, { HASH_CONCURRENCY: String(hashConcurrency) });
    gatehouse = started.server;
    base = `http://127.0.0.1:${started.port}`;
  });
  afterAll(async () => {
    await gatehouse?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('no hashing thread exists before the first sign-in', () => {
    const nice = threadNice(gatehouse.pid);
    expect([...nice.values()].filter((n) => n !== 0)).toEqual([]);
  });

  it('sign-ins hash on threads at the default HASH_NICE, at most HASH_CONCURRENCY of them; the event loop stays at 0', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const client = new Client(base);
        const response = await client.signIn('ada@example.com', password);
        return { status: response.status, session: await client.session() };
      }),
    );
    for (const outcome of outcomes) {
      expect(outcome.status).toBe(200);
      expect(outcome.session).toMatchObject({ user: { email: 'ada@example.com' } });
    }
    const nice = threadNice(gatehouse.pid);
    expect(nice.get(gatehouse.pid)).toBe(0);
    const lowered = [...nice.values()].filter((n) => n !== 0);
    expect(lowered.length).toBeGreaterThanOrEqual(1);
    expect(lowered.length).toBeLessThanOrEqual(hashConcurrency);
    expect(new Set(lowered)).toEqual(new Set([defaultHashNice]));
  });
});

describe.skipIf(!hasProc)('HASH_NICE=0', () => {
  it("hashes at the event loop's own priority", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-nice-'));
    await addUser(dir, 'ada@example.com');
    const { server, port } = await startGatehouse(dir, { HASH_NICE: '0' });
    try {
      const client = new Client(`http://127.0.0.1:${port}`);
      expect((await client.signIn('ada@example.com', password)).status).toBe(200);
      expect([...threadNice(server.pid).values()].filter((n) => n !== 0)).toEqual([]);
    } finally {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
