/**
 * One kind's words: a subject line, a plain-text body and the HTML body's content, the values it
 * cannot go without, and its place in the queue. The account's flows and each way in declare
 * their own kinds beside their code; the service hands every registered kind to the renderer and
 * to the check of MAIL_TEMPLATES_DIR.
 */
export interface MailWords {
  subject: string;
  text: string;
  /** The HTML body's content; `htmlLayout` wraps it into the document. */
  html: string;
  /** Values the caller must give: a mail without its link is a bug, not a mail. */
  required: readonly string[];
  /**
   * Which mail the worker sends first when several are due (issue 25): 0 goes before 1. A reset
   * and the security notices are what a person is waiting for, and a reset link expires in the
   * queue: sign-ups from a few dozen addresses to fresh mailboxes must not hold them behind a
   * relay that takes a few mails a second. Migration 008 sets the same for mail queued before it.
   */
  priority: 0 | 1;
}

/** Every kind a service sends, by name. */
export type MailCatalogue = Readonly<Record<string, MailWords>>;

/** The kinds of several declarations as one; a kind declared twice is a bug of the registry. */
export function joinMailCatalogues(...parts: readonly MailCatalogue[]): MailCatalogue {
  const joined: Record<string, MailWords> = {};
  for (const part of parts)
    for (const [kind, words] of Object.entries(part)) {
      if (Object.hasOwn(joined, kind)) throw new Error(`the mail kind ${kind} is declared twice`);
      joined[kind] = words;
    }
  return Object.freeze(joined);
}
