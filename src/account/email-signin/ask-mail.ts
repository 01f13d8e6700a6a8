import type { FastifyReply, FastifyRequest } from 'fastify';
import { authBasePath } from '../../auth/bridge/auth-config.js';
import { settleCallbackUrl } from '../../auth/cookies/callback-url.js';
import { authCookieNames } from '../../auth/cookies/cookie-names.js';
import { parseCookies, serializeCookie } from '../../auth/cookies/cookies.js';
import type { WireKit, WireRoute } from '../../auth/way-in.js';
import { HttpError } from '../../http/errors.js';
import { retryAfterParam } from '../../pages/retry-after.js';
import { readEmail } from '../../users/email.js';
import { CsrfRefusal } from '../csrf-guard.js';
import type { MailRequestLimiter } from '../mail-limits.js';
import { overBudget, overBudgetMessage } from '../mail-limits.js';
import type { PacedWork } from '../paced-work.js';
import type { AskedAddress } from './asked-address.js';
import { askRefusals } from './email-notices.js';
import { browserOf, type SignInMailOutcome, type SignInMailRequest } from './signin-mail.js';

/*
 * `POST /api/auth/signin/email` (and `signin/nodemailer`): Auth.js's e-mail provider as
 * `signIn("email", { email })` from next-auth/react posts it (`csrfToken`, `email`,
 * `callbackUrl`), answered as Auth.js answers it: 302 to `/api/auth/verify-request?provider=…
 * &type=email`, or `{url}` for `X-Auth-Return-Redirect`. The same answer, in the same time, for
 * every address: before it runs only what is the same for all of them (the CSRF pair, the
 * address's form, the client's mail budgets); the lookup and the mail run after it, in the
 * paced queue (./signin-mail.ts), so the account's work shows in no answer's time.
 */

export interface AskMailDeps {
  assertCsrf(request: FastifyRequest, body: Record<string, unknown>): void;
  mailRequests: Pick<MailRequestLimiter, 'charge'>;
  afterAnswer: Pick<PacedWork, 'push'>;
  /** The mail's work after the answer (./signin-mail.ts's, over the way in's ports). */
  mailSignIn(request: SignInMailRequest): Promise<SignInMailOutcome>;
  /** How long the mail's code lives: the browser keeps the address it asked for as long. */
  ttlSeconds: number;
  askedAddress: Pick<AskedAddress, 'keep'>;
  now: () => number;
  log: {
    info(fields: object, message: string): void;
    warn(fields: object, message: string): void;
  };
}

/** The posted fields, as Auth.js reads them: a JSON object, or a form (the last of a name). */
function fieldsOf(request: FastifyRequest, body: Buffer): Record<string, unknown> {
  const text = body.toString('utf8');
  if ((request.headers['content-type'] ?? '').toLowerCase().includes('application/json'))
    // The body guard has checked it is a JSON object.
    return JSON.parse(text) as Record<string, unknown>;
  return Object.fromEntries(new URLSearchParams(text));
}

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * Auth.js's answer with a redirect to `url`: 302, or for its clients (`X-Auth-Return-Redirect`)
 * JSON `{url}` (a success keeps the redirect's headers, as Auth.js's does). A throttled one is
 * 429 for them, and carries `Retry-After` (and `retryAfter` in the URL a browser follows).
 */
function redirect(
  request: FastifyRequest,
  reply: FastifyReply,
  url: string,
  answer: { success?: true; cookies?: readonly string[]; retryAfterSeconds?: number } = {},
): FastifyReply {
  const wait = answer.retryAfterSeconds;
  if (wait !== undefined) reply.header('retry-after', String(wait));
  if (answer.cookies !== undefined && answer.cookies.length > 0)
    reply.header('set-cookie', [...answer.cookies]);
  if (request.headers['x-auth-return-redirect'] === undefined) {
    const shown = wait === undefined ? url : `${url}&${retryAfterParam}=${wait}`;
    return reply.code(302).header('location', shown).send();
  }
  if (answer.success === true) reply.header('location', url);
  return reply
    .code(wait === undefined ? 200 : 429)
    .header('content-type', 'application/json')
    .send(Buffer.from(JSON.stringify({ url })));
}

/** Where the link's sign-in lands, as Auth.js settles it, and the cookie it sets for it. */
function callbackOf(kit: WireKit, request: FastifyRequest, posted: unknown) {
  const { origin, secure } = kit.site(request);
  const name = authCookieNames(secure, '__Secure-').callbackUrl;
  const held = parseCookies(request.headers.cookie).get(name);
  const asked = text(posted) ?? held;
  const settled = (asked === undefined ? undefined : settleCallbackUrl(asked, origin)) ?? origin;
  return { settled, cookie: settled === held ? [] : [serializeCookie(name, settled, { secure })] };
}

export function askMailRoute(deps: AskMailDeps, providerId: 'email' | 'nodemailer'): WireRoute {
  return {
    action: `signin/${providerId}`,
    methods: ['POST'],
    // Held to this origin as a sign-in is: a foreign page must not start one in this browser.
    signsIn: true,
    async handler(request, reply, kit) {
      const fields = fieldsOf(request, kit.guardPost(request));
      const { origin, secure } = kit.site(request);
      const refused = (code: string) =>
        `${origin}${authBasePath}/signin?error=EmailSignInError&code=${code}`;
      try {
        deps.assertCsrf(request, fields);
      } catch (error) {
        if (!(error instanceof CsrfRefusal)) throw error;
        request.log.warn({ reason: error.reason }, 'CSRF check failed');
        return redirect(request, reply, `${origin}${authBasePath}/signin?error=MissingCSRF`);
      }
      const email = readEmail(text(fields.email) ?? '');
      if (email === null) return redirect(request, reply, refused(askRefusals.address));
      try {
        await deps.mailRequests.charge('email_signin', email, request.ip);
      } catch (error) {
        if (!(error instanceof HttpError) || error.code !== 'rate_limited') throw error;
        const retryAfterSeconds = Number(error.headers['retry-after']);
        return redirect(request, reply, refused(askRefusals.limited), { retryAfterSeconds });
      }
      const callback = callbackOf(kit, request, fields.callbackUrl);
      const work: SignInMailRequest = {
        email,
        // The CSRF guard has checked it is the token of this browser's pair (where it read it).
        browser: browserOf(String(request.headers['x-csrf-token'] ?? fields.csrfToken)),
        callbackUrl: callback.settled,
        origin,
        at: deps.now(),
      };
      reply.raw.once('close', () =>
        deps.afterAnswer.push({
          failure: 'email sign-in: could not queue its mail',
          run: async () => {
            const outcome = await deps.mailSignIn(work);
            if (outcome === 'over_budget')
              deps.log.warn(overBudget('email_signin'), overBudgetMessage);
            else deps.log.info({ outcome }, 'email sign-in: mail decided');
          },
        }),
      );
      // For the code's form: sealed, one length for every address (./asked-address.ts).
      const kept = deps.askedAddress.keep(email, deps.ttlSeconds, secure);
      const query = new URLSearchParams({ provider: providerId, type: 'email' });
      return redirect(request, reply, `${origin}${authBasePath}/verify-request?${query}`, {
        success: true,
        cookies: [...callback.cookie, ...(kept === undefined ? [] : [kept])],
      });
    },
  };
}
