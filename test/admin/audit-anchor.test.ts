import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneAuditLog } from '../../src/audit/prune.js';
import { openDatabase } from '../../src/db/open.js';
import type { Database } from '../../src/db/schema.js';
import {
  serviceDatabase,
  startBuiltService,
  type AccountService,
} from '../account/account-service.js';
import { cutOldestAuditEntries, rewriteAuditChain } from '../helpers/audit-chain.js';
import { Client } from '../helpers/client.js';
import { firstPass } from '../helpers/passes.js';
import { hasPostgres } from '../helpers/postgres.js';
import { canRun, freePort, untilAccepts } from '../helpers/processes.js';

/*
 * Issue 35, item 5, black-box: the built service with its admin API, the CLI, and the anchor
 * script of docs/admin-api.md run as written (bash, curl, jq), on SQLite and PostgreSQL. The
 * oldest entries, minutes old, deleted in the database with the checkpoint moved after them:
 * `audit verify`, the API's verify and the script all fail, where an honest prune past the
 * retention passes all three. With AUDIT_KEY, a rewrite of the whole chain and its head, hashes
 * recomputed, fails too, and stays failed until the operator seals again.
 */

const password = 'correct horse battery staple';
const token = 'anchor-token-0123456789abcdef0123456789abcdef';
const auditKey = 'audit-key-0123456789abcdefghijklmnopqrstuvwxyz';
const dayMs = 86_400_000;
const needs = ['bash', 'curl', 'jq'].filter((tool) => !canRun(tool, ['--version']));
if (needs.length > 0) process.stderr.write(`audit-anchor: skipped, needs ${needs.join(', ')}\n`);

/** The docs' anchor script, as an operator copies it. */
const anchorScript = (() => {
  const docs = fs.readFileSync(path.join(import.meta.dirname, '../../docs/admin-api.md'), 'utf8');
  const block = [...docs.matchAll(/```sh\n([\s\S]*?)```/g)].find((m) =>
    m[1]?.includes('last-head'),
  );
  if (block?.[1] === undefined) throw new Error('docs/admin-api.md: no anchor script');
  return block[1];
})();

const backends = [
  { name: 'SQLite', backend: 'sqlite' as const, skip: needs.length > 0 },
  { name: 'PostgreSQL', backend: 'postgres' as const, skip: needs.length > 0 || !hasPostgres },
];

/** A service with its admin API over a database of its own; `env` is the CLI's as well. */
async function startWithAdmin(backend: 'sqlite' | 'postgres', env: Record<string, string> = {}) {
  const database = await serviceDatabase(backend);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-audit-anchor-'));
  fs.writeFileSync(path.join(dir, 'admin-tokens'), `anchor:${token}\n`);
  const adminPort = await freePort();
  const shared = { ...database.env, ...env };
  const service = await startBuiltService(shared, {
    ADMIN_PORT: String(adminPort),
    ADMIN_TOKEN_FILE: path.join(dir, 'admin-tokens'),
  });
  await untilAccepts(adminPort);
  const api = `http://127.0.0.1:${adminPort}/api/admin`;
  fs.writeFileSync(path.join(dir, 'anchor.sh'), anchorScript);
  const url = shared.DATABASE_URL ?? `file:${path.join(shared.DATA_DIR as string, 'gatehouse.db')}`;
  return {
    service,
    /** The anchor script, run in its folder (where it keeps last-head). */
    anchor: () =>
      spawnSync('bash', ['anchor.sh'], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', API: api, TOKEN: token },
        encoding: 'utf8',
      }),
    verdict: async () =>
      (await (
        await fetch(`${api}/audit/verify`, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as {
        ok: boolean;
        firstBad?: { seq: number; problem: string };
      },
    /** Work on the database from outside, as someone with its file or password would. */
    async tamper(work: (db: Kysely<Database>) => Promise<unknown>) {
      const { db } = openDatabase(url);
      try {
        await work(db);
      } finally {
        await db.destroy();
      }
    },
    signIn: async (times: number) => {
      for (let i = 0; i < times; i += 1)
        expect((await new Client(service.url).signIn('ada@example.com', password)).status).toBe(
          200,
        );
    },
    async close() {
      await service.stop();
      await database.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `audit verify` until the entries the service writes after its answers are all in. */
async function verified(service: AccountService, entries: number) {
  for (const deadline = Date.now() + 20_000; ;) {
    const result = await service.cli(['audit', 'verify']);
    if (Number(/(\d+) entries/.exec(result.stdout)?.[1]) >= entries || Date.now() > deadline)
      return result;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.runIf(firstPass).each(backends)('the audit chain’s ends on $name', ({ backend, skip }) => {
  let own: Awaited<ReturnType<typeof startWithAdmin>>;
  let sealed: Awaited<ReturnType<typeof startWithAdmin>>;

  beforeAll(async () => {
    if (skip) return;
    [own, sealed] = await Promise.all([
      startWithAdmin(backend),
      startWithAdmin(backend, { AUDIT_KEY: auditKey }),
    ]);
    await own.service.addUser('ada@example.com', password);
    await sealed.service.addUser('ada@example.com', password);
  });
  afterAll(async () => {
    await own?.close();
    await sealed?.close();
  });

  it.skipIf(skip)(
    'an honest prune past the retention passes; the oldest entries cut by hand fail verify, the API and the anchor',
    async () => {
      await own.signIn(3);
      // A chain written 400 days ago: every entry moved back, hashes and head recomputed.
      expect((await verified(own.service, 4)).code).toBe(0);
      await own.tamper((db) => rewriteAuditChain(db, -400 * dayMs));
      expect(own.anchor().status).toBe(0);
      await own.signIn(4);
      await verified(own.service, 8);
      // The prune the service runs every ten minutes, run now: the kept head goes with it.
      await own.tamper((db) => pruneAuditLog(db, Date.now() - 365 * dayMs));
      const honest = await own.service.cli(['audit', 'verify']);
      expect(honest.stderr).toBe('');
      expect(honest.stdout).toMatch(
        /^audit log whole: 4 entries; head seq 8 hash [0-9a-f]{64}\ncheckpoint: seq 4, its last pruned entry stamped \S+ \(AUDIT_RETENTION_DAYS 365\)\nseal: none \(AUDIT_KEY is not set\)\n$/,
      );
      expect(await own.verdict()).toMatchObject({ ok: true });
      const run = own.anchor();
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);

      // The attack: entries 5 and 6 (minutes old) deleted, the checkpoint moved onto 6.
      await own.tamper((db) => cutOldestAuditEntries(db, 6));
      let cut = await own.service.cli(['audit', 'verify']);
      expect(cut.code).toBe(1);
      expect(cut.stderr).toMatch(
        /^gatehouse: audit log cut: the checkpoint \(seq 6\) holds no record/,
      );
      expect(await own.verdict()).toMatchObject({
        ok: false,
        firstBad: { seq: 6, problem: 'checkpoint' },
      });
      expect(own.anchor()).toMatchObject({
        status: 1,
        stderr: expect.stringMatching(/^audit log broken/),
      });
      // Done thoroughly, the deleted entry written as the checkpoint's record: its age shows.
      await own.tamper((db) => cutOldestAuditEntries(db, 7, { record: true }));
      cut = await own.service.cli(['audit', 'verify']);
      expect(cut.code).toBe(1);
      expect(cut.stderr).toMatch(
        /^gatehouse: audit log cut short: the checkpoint \(seq 7\) passed entries younger than AUDIT_RETENTION_DAYS \(365\)/,
      );
      expect(own.anchor().status).toBe(1);
    },
  );

  it.skipIf(skip)(
    'with AUDIT_KEY, a chain rewritten whole fails until the operator seals again, and the anchor notices the new seal',
    async () => {
      expect(sealed.service.output()).toContain(
        'AUDIT_KEY is set but the audit log is not sealed yet',
      );
      const unsealed = await sealed.service.cli(['audit', 'verify']);
      expect(unsealed.code).toBe(1);
      expect(unsealed.stderr).toMatch(/audit log not sealed: AUDIT_KEY is set/);
      expect((await sealed.service.cli(['audit', 'seal'])).stdout).toBe(
        'audit log sealed at seq 1 (it had none)\n',
      );
      await sealed.signIn(2);
      expect((await verified(sealed.service, 3)).stdout).toContain(
        'seal: whole under AUDIT_KEY, since seq 1\n',
      );
      expect(sealed.anchor().status).toBe(0);

      // Someone with the database and not the key: every hash recomputed, the head moved.
      await sealed.tamper((db) => rewriteAuditChain(db, -60_000));
      const broken = await sealed.service.cli(['audit', 'verify']);
      expect(broken.code).toBe(1);
      expect(broken.stderr).toMatch(/audit log seal broken: the head or checkpoint was moved/);
      expect(await sealed.verdict()).toMatchObject({ ok: false, firstBad: { problem: 'seal' } });
      // The service's own appends do not mend it.
      await sealed.signIn(1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await sealed.service.cli(['audit', 'verify'])).code).toBe(1);
      expect(sealed.anchor().status).toBe(1);
      // The operator looked into it and seals the chain as it is: the anchor says it started again.
      expect((await sealed.service.cli(['audit', 'seal'])).stdout).toMatch(
        /^audit log sealed at seq \d+ \(the seal it had did not match\)\n$/,
      );
      expect(sealed.anchor().stderr).toMatch(/^audit seal started again \(since 1, now \d+\)/);
    },
  );
});
