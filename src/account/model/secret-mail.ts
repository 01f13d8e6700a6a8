import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailKind, MailQueue } from '../../mail/mail-queue.js';
import type { PagePaths } from '../paths.js';
import { issue, type IssuedToken, type IssueRequest } from './secrets.js';

/** Where a mailed secret's link is built, and when. */
export interface SecretLinks {
  /** The public origin links are built on (AUTH_URL, or the request's in development). */
  origin: string;
  /** Where the pages live on it (ACCOUNT_PAGES_PATH). */
  pages: PagePaths;
  ttlSeconds: number;
  now: number;
}

/** The mail's "expires in": days from two days up, else minutes (never overstated). */
export function expiresIn(ttlSeconds: number): Record<string, string> {
  return ttlSeconds >= 2 * 86_400
    ? { expiresInDays: String(Math.floor(ttlSeconds / 86_400)) }
    : { expiresInMinutes: String(Math.max(1, Math.floor(ttlSeconds / 60))) };
}

/** A mailed secret, its mail, and where its link goes. */
export interface SecretMailRequest {
  secret: Omit<IssueRequest, 'ttlSeconds'>;
  kind: MailKind;
  to: string;
  name: string;
  pagePath: string;
  links: SecretLinks;
}

/** A mailed secret and its mail in one transaction of their own (see queueSecretMail). */
export async function issueSecretMail(
  db: Kysely<Database>,
  mail: MailQueue,
  request: SecretMailRequest,
): Promise<void> {
  await db.transaction().execute((trx) => queueSecretMail(trx, mail, request));
}

/**
 * A mailed secret and its mail in the caller's transaction (the outbox), so a mail is queued
 * exactly when its secret exists. The link goes to `pagePath`, whose GET consumes nothing; the
 * token rides in the query (a page without script never sees a fragment; the page sends
 * `Referrer-Policy: no-referrer`); the short code, when the secret has one, goes beside it.
 * Returns the issued secret and the link (for `--print-link`; never for a log).
 */
export async function queueSecretMail(
  trx: Kysely<Database>,
  mail: MailQueue | undefined,
  request: SecretMailRequest,
): Promise<{ issued: IssuedToken; link: string }> {
  const { links } = request;
  const issued = await issue(trx, { ...request.secret, ttlSeconds: links.ttlSeconds }, links.now);
  const link = `${links.origin}${request.pagePath}?token=${issued.token}`;
  await mail?.enqueue(trx, {
    kind: request.kind,
    to: request.to,
    values: {
      ...(request.name !== '' && { name: request.name }),
      link,
      ...(issued.code !== null && { code: issued.code }),
      ...expiresIn(links.ttlSeconds),
    },
    expiresAt: new Date(issued.expiresAt),
  });
  return { issued, link };
}
