import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { MailKind, MailQueue, MailRequest } from './mail-queue.js';
import type { OutboxStore } from './mail-outbox-store.js';
import type { MailRenderer } from './templates.js';

/**
 * `send`: SMTP is configured, the worker delivers. `hold` (development without SMTP_URL): mails
 * stay in the outbox for `gatehouse mail show`, and their link and code go to the log.
 * `off` (production without SMTP_URL): the mail flows are off and nothing may be queued.
 */
export type MailMode = 'send' | 'hold' | 'off';

/** What a held mail's log line shows, so a developer can follow the link. */
export interface HeldMail {
  id: string;
  kind: MailKind;
  to: string;
  link?: string;
  code?: string;
  lockLink?: string;
}

/** The queue the app gets, plus what the CLI needs: the mode and the new mail's id. */
export interface OutboxQueue extends MailQueue {
  readonly mode: MailMode;
  enqueueWithId(db: Kysely<Database>, mail: MailRequest): Promise<string>;
}

/** At least an hour of retries (issue 19) before a mail is marked failed. */
export const retryWindowMs = 60 * 60_000;

export function createMailQueue(options: {
  mode: MailMode;
  store: OutboxStore;
  renderer: MailRenderer;
  now?: () => number;
  /** Called after a mail is written in `send` mode (the worker looks at once). */
  onQueued?: (id: string) => void;
  /** Called after a mail is written in `hold` mode (development: its link goes to the log). */
  onHeld?: (mail: HeldMail) => void;
}): OutboxQueue {
  const { mode, store, renderer } = options;
  const now = options.now ?? (() => Date.now());

  const enqueueWithId = async (db: Kysely<Database>, mail: MailRequest) => {
    if (mode === 'off')
      throw new Error(
        'mail is off (production without SMTP_URL): this mail flow should answer 404',
      );
    // Rendered now: a template or value problem fails the caller's transaction, not a later send.
    const rendered = renderer.render(mail.kind, { ...mail.values, to: mail.to });
    const at = now();
    const id = randomUUID();
    await store.insert(db, {
      id,
      kind: mail.kind,
      recipient: mail.to,
      subject: rendered.subject,
      body_text: rendered.text,
      body_html: rendered.html,
      state: mode === 'hold' ? 'held' : 'queued',
      next_attempt_at: at,
      retry_until: at + retryWindowMs,
      lease_holder: null,
      lease_until: null,
      last_error: null,
      created_at: at,
      sent_at: null,
      expires_at: mail.expiresAt === undefined ? null : mail.expiresAt.getTime(),
      priority: renderer.priorityOf(mail.kind),
    });
    if (mode === 'hold') {
      const { link, code, lockLink } = mail.values;
      options.onHeld?.({
        id,
        kind: mail.kind,
        to: mail.to,
        ...(link !== undefined && { link }),
        ...(code !== undefined && { code }),
        ...(lockLink !== undefined && { lockLink }),
      });
    } else {
      options.onQueued?.(id);
    }
    return id;
  };

  return {
    mode,
    enabled: mode !== 'off',
    enqueueWithId,
    enqueue: async (db, mail) => {
      await enqueueWithId(db, mail);
    },
  };
}
