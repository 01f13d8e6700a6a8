import type { LoopbackSmtp, ReceivedMail } from './smtp.js';

/** The link to `path` a person reads in a mail's plain-text body (throws when there is none). */
export function linkIn(mail: ReceivedMail, path: string): string {
  const text = mail.parsed.text ?? '';
  const link = new RegExp(`https?://\\S+${path}\\?token=[\\w-]+`).exec(text)?.[0];
  if (link === undefined) throw new Error(`no ${path} link in:\n${text}`);
  return link;
}

/** The link to `path`, its token, and the short code for another device, as a person reads them. */
export function secretsIn(mail: ReceivedMail, path: string) {
  const link = linkIn(mail, path);
  const text = mail.parsed.text ?? '';
  const code = /enter this code on the page: ([A-Z0-9]+)/.exec(text)?.[1];
  if (code === undefined) throw new Error(`no code in:\n${text}`);
  return { link, token: new URL(link).searchParams.get('token') ?? '', code };
}

/**
 * A mail scanner (Defender safe links): GETs every link in every mail before anyone reads it.
 * Returns how many it opened.
 */
export async function scanEveryLink(smtp: LoopbackSmtp): Promise<number> {
  let scanned = 0;
  for (const mail of smtp.received) {
    const html = typeof mail.parsed.html === 'string' ? mail.parsed.html : '';
    const links = `${mail.parsed.text ?? ''} ${html}`.match(/https?:\/\/[^\s"'<>]+/g);
    for (const link of links ?? []) {
      const response = await fetch(link.replace(/&amp;/g, '&'), { redirect: 'manual' });
      await response.arrayBuffer();
      scanned += 1;
    }
  }
  return scanned;
}
