import type { FastifyReply } from 'fastify';

/** How a page is answered besides its markup. */
export interface PageReply {
  status: number;
  /** The pages' Content-Security-Policy (page-csp.ts). */
  policy: string;
  /**
   * `no-referrer` where the URL or a form carries a secret (the browser then posts the page's
   * forms with `Origin: null`); `same-origin` elsewhere, which keeps the real Origin on the
   * pages' own posts and sends nothing to other sites.
   */
  referrer: 'no-referrer' | 'same-origin';
  cookies?: readonly string[] | undefined;
  headers?: Record<string, string> | undefined;
}

/**
 * The one way an HTML page is sent: the page's CSP, its referrer policy, and never stored by a
 * cache (every page names who is signed in or holds a CSRF token or a mailed secret).
 */
export function sendPage(reply: FastifyReply, html: string, answer: PageReply): FastifyReply {
  reply.code(answer.status).headers({
    ...answer.headers,
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': answer.policy,
    'referrer-policy': answer.referrer,
    'cache-control': 'no-store',
  });
  if (answer.cookies !== undefined && answer.cookies.length > 0)
    reply.header('set-cookie', [...answer.cookies]);
  return reply.send(html);
}
