import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase, type OpenDatabase } from '../../src/db/open.js';
import { noObserver } from '../../src/observe/observer.js';
import { createKyselySessionStore } from '../../src/sessions/session-store.js';
import { createKyselyUserStore } from '../../src/users/kysely-store.js';
import { activeSessionSql } from '../../src/sessions/active-session.js';
import { createRevocationCheck } from '../../src/sessions/revocation-check.js';
import { databaseBackends } from '../helpers/backends.js';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const at = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(at) : at.endsWith('.ts') ? [at] : [];
  });
}

describe('the revocation check is one statement for both stores', () => {
  it('the two engines ask the same join and differ only in how many ids they match', () => {
    const sqlite = activeSessionSql('sqlite');
    const postgres = activeSessionSql('postgres');
    expect(sqlite).toContain('sessions.id = ?');
    expect(postgres).toContain('sessions.id = any($1::text[])');
    const shape = (text: string) =>
      text
        .replace('sessions.id as "sessionId", ', '')
        .replace(/sessions\.id = (\?|any\(\$1::text\[\]\))/, 'sessions.id = <ids>');
    expect(shape(postgres)).toBe(shape(sqlite));
  });

  it('no other source file writes it', () => {
    const writers = sourceFiles('src')
      .filter((file) => fs.readFileSync(file, 'utf8').includes('join users on users.id'))
      .map((file) => file.split(path.sep).join('/'));
    expect(writers).toEqual(['src/sessions/active-session.ts']);
  });
});

describe.each(databaseBackends('revocation-check'))('the revocation check on $name', (backend) => {
  let opened: OpenDatabase | undefined;
  let dispose: (() => Promise<void>) | undefined;
  let services: {
    users: ReturnType<typeof createKyselyUserStore>;
    sessions: ReturnType<typeof createKyselySessionStore>;
  };
  const now = () => 1_800_000_000_000;

  beforeAll(async () => {
    if (backend.skip) return;
    const target = await backend.create();
    dispose = target.dispose;
    opened = openDatabase(target.url);
    await migrateToLatest(opened.db);
    services = {
      users: createKyselyUserStore(opened.db, now),
      sessions: createKyselySessionStore(opened.db, opened),
    };
  });
  afterAll(async () => {
    await opened?.db.destroy();
    await dispose?.();
  });

  it.skipIf(backend.skip)(
    'a live session reads as its user; revoked, or its user disabled, as none',
    async () => {
      const check = createRevocationCheck(opened as OpenDatabase, noObserver);
      // (The store's own check is one of these; a second one here would share its watch on
      // the SQLite file's commits, which each check must have to itself.)
      const asked = async (sid: string) => {
        const answer = await check.findActive(sid);
        if (check.findActiveNow !== undefined) expect(check.findActiveNow(sid)).toEqual(answer);
        return answer;
      };
      const ada = await services.users.create({
        email: 'ada@example.com',
        name: 'Ada',
        passwordHash: 'hash',
      });
      if (ada === null) throw new Error('no user');
      const credential = { userId: ada.id, credentialVersion: ada.credentialVersion };
      const kept = await services.sessions.create(credential, now());
      const ended = await services.sessions.create(credential, now());
      if (kept === null || ended === null) throw new Error('no session');
      expect(await asked(kept)).toEqual({
        userId: ada.id,
        email: 'ada@example.com',
        name: 'Ada',
        createdAt: now(),
      });
      await services.sessions.revoke(ended, now());
      expect(await asked(ended)).toBeNull();
      expect(await asked('no-such-session')).toBeNull();
      await services.users.setDisabled(ada.id, true);
      expect(await asked(kept)).toBeNull();
      // The PostgreSQL check batches a round's ids into one statement: each gets its own row.
      const many = await Promise.all([kept, ended, kept].map((sid) => check.findActive(sid)));
      expect(many).toEqual([null, null, null]);
    },
  );
});
