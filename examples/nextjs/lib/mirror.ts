import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/** The user as a Gatehouse webhook's `data` has them, after the change it announces. */
export interface GatehouseUser {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
  disabled: boolean;
}

export interface GatehouseEvent {
  /** `user.created`, `user.updated`, `user.deleted`, `email.changed`, `session.created`, … */
  type: string;
  /** When the change happened (ISO 8601, UTC). */
  timestamp: string;
  data: GatehouseUser;
}

export interface MirroredUser extends GatehouseUser {
  deleted: boolean;
  changedAt: string;
}

// This app's own table of users, kept in step with Gatehouse's by its webhooks
// (app/api/gatehouse-webhooks/route.ts): a SQLite file in the app's data folder, with the
// node:sqlite module built into Node.js 24. Your app would use its own database the same way.
let opened: DatabaseSync | undefined;

function database(): DatabaseSync {
  if (opened) return opened;
  const folder = path.join(process.cwd(), 'data');
  fs.mkdirSync(folder, { recursive: true });
  opened = new DatabaseSync(path.join(folder, 'app.sqlite'));
  opened.exec(`
    PRAGMA journal_mode = WAL;
    CREATE TABLE IF NOT EXISTS users (
      id TEXT PRIMARY KEY,
      email TEXT NOT NULL,
      name TEXT NOT NULL,
      email_verified INTEGER NOT NULL,
      disabled INTEGER NOT NULL,
      deleted INTEGER NOT NULL,
      changed_at TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS webhooks_handled (
      id TEXT PRIMARY KEY,
      received_at TEXT NOT NULL
    );
  `);
  return opened;
}

/**
 * Applies one verified event, once per `webhook-id`: false when that id was handled already
 * (Gatehouse sends an event again when it did not see the first answer). Every event carries the
 * user as Gatehouse has them after the change, so any type is written over this copy, unless the
 * copy is newer: deliveries are not ordered, a retry may come after a later event. A removed user
 * stays as a row marked deleted, so that an older event arriving late cannot bring them back.
 */
export function applyEvent(webhookId: string, event: GatehouseEvent): boolean {
  const db = database();
  const now = new Date();
  db.exec('BEGIN IMMEDIATE');
  try {
    const first = db
      .prepare(
        'INSERT INTO webhooks_handled (id, received_at) VALUES (?, ?) ON CONFLICT DO NOTHING',
      )
      .run(webhookId, now.toISOString());
    if (first.changes === 0) {
      db.exec('ROLLBACK');
      return false;
    }
    // Gatehouse gives up on an event after 25 hours: ids older than two days can be forgotten.
    const forget = new Date(now.getTime() - 2 * 86_400_000).toISOString();
    db.prepare('DELETE FROM webhooks_handled WHERE received_at < ?').run(forget);
    const user = event.data;
    db.prepare(
      `INSERT INTO users (id, email, name, email_verified, disabled, deleted, changed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET
         email = excluded.email, name = excluded.name, email_verified = excluded.email_verified,
         disabled = excluded.disabled, deleted = max(users.deleted, excluded.deleted),
         changed_at = excluded.changed_at
       WHERE excluded.changed_at >= users.changed_at`,
    ).run(
      user.id,
      user.email,
      user.name,
      user.emailVerified ? 1 : 0,
      user.disabled ? 1 : 0,
      event.type === 'user.deleted' ? 1 : 0,
      event.timestamp,
    );
    db.exec('COMMIT');
    return true;
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}

/** One user as this app's table has them, or undefined before their first webhook. */
export function mirroredUser(id: string): MirroredUser | undefined {
  const row = database().prepare('SELECT * FROM users WHERE id = ?').get(id);
  if (!row) return undefined;
  return {
    id: String(row.id),
    email: String(row.email),
    name: String(row.name),
    emailVerified: row.email_verified === 1,
    disabled: row.disabled === 1,
    deleted: row.deleted === 1,
    changedAt: String(row.changed_at),
  };
}

/** How many users this app's table has, removed ones left out. */
export function mirroredCount(): number {
  const row = database().prepare('SELECT count(*) AS n FROM users WHERE deleted = 0').get();
  return Number(row?.n ?? 0);
}
