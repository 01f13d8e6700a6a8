import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseCookies } from '../../auth/cookies/cookies.js';
import { StoreUnavailableError } from '../../auth/request/request-context.js';
import type { SignInPageAddition, WayIn, WireKit } from '../../auth/way-in.js';
import { challengeCookieName } from '../../challenge/challenge-cookie.js';
import { sendError } from '../../http/error-handler.js';
import { HttpError } from '../../http/errors.js';
import { storeUnavailable } from '../../http/answer.js';
import { afterPasswordParam } from '../../pages/retry-after.js';
import type { SignInCheck } from '../../auth/signin/sign-in-check.js';

/*
 * Enrolment at sign-in as a way in (SECOND_FACTOR=required; its check and key:
 * ./signin-enrolment.ts). A right password of an account without a second factor is answered
 * `second_factor_enrolment_required` and a sign-in challenge, and a code is mailed to the
 * account's address (mail off: `enrolment_code_required`, and an operator's enrolment code
 * stands in for it); the sign-in page (and `GET /api/auth/enrolment/totp`) show, for that
 * challenge, the authenticator app's key to enrol and where the code went, and the next sign-in
 * post with the challenge, that code (`emailCode`) and a code of the app turns TOTP on and
 * signs in.
 */

/** What the sign-in challenge an enrolment stands on is issued for. */
export const enrolmentPurpose = 'enrolment';

/** What an authenticator app is set up with: the key, its `otpauth://` URI and QR code (SVG). */
export interface EnrolmentKey {
  secret: string;
  uri: string;
  qrSvg: string;
  /**
   * The address the code proving this enrolment was mailed to (the account's), or null when
   * mail is off and an operator's enrolment code is asked for instead.
   */
  codeSentTo: string | null;
}

export interface EnrolmentPort {
  /**
   * The key the challenge's account enrols, or null when the challenge is not live or its
   * account needs no enrolment (it has a factor, or factors are not required).
   */
  keyFor(challenge: string): Promise<EnrolmentKey | null>;
}

/**
 * The refusals after which the sign-in page is the enrolment step, while the browser's
 * challenge can still enrol: the first answer (mail on or off), and a refusal of either code.
 */
const enrolmentStepCodes: ReadonlySet<string> = new Set([
  'second_factor_enrolment_required',
  'enrolment_code_required',
  'second_factor_invalid',
  'email_code_required',
  'email_code_invalid',
]);

/** Whether the sign-in page with these query parameters is the enrolment step. */
export function isEnrolmentStep(params: URLSearchParams): boolean {
  if (params.get('error') !== 'CredentialsSignin') return false;
  const code = params.get('code') ?? '';
  // A second factor's lock pauses the enrolment's codes too: its step says so.
  const paused = code === 'rate_limited' && params.get(afterPasswordParam) === '1';
  return paused || enrolmentStepCodes.has(code);
}

/**
 * `GET /api/auth/enrolment/totp` (SECOND_FACTOR=required): for an app whose user got
 * `second_factor_enrolment_required`, the authenticator app's key its challenge enrols, to show
 * before the code is sent back through the credentials callback. 401 without a live challenge
 * of an account to enrol; 404 unless factors are required.
 */
async function enrolmentKeyRoute(
  port: EnrolmentPort | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
  kit: WireKit,
): Promise<FastifyReply> {
  if (port === undefined) return sendError(reply, new HttpError('not_found'));
  const challenge = parseCookies(request.headers.cookie).get(
    challengeCookieName(kit.site(request).secure),
  );
  let key: EnrolmentKey | null = null;
  try {
    if (challenge !== undefined && challenge !== '') key = await port.keyFor(challenge);
  } catch (error) {
    // Only the store's failure is a 503; anything else is a bug, logged, and a bare 500.
    if (!(error instanceof StoreUnavailableError)) {
      request.log.error({ err: error }, 'enrolment read failed');
      return sendError(reply, new HttpError('internal_error'));
    }
    request.log.error({ err: error.cause }, 'database unavailable during an enrolment read');
    return sendError(reply, storeUnavailable());
  }
  if (key === null)
    return sendError(
      reply,
      new HttpError(
        'unauthenticated',
        {},
        'No sign-in is waiting for an enrolment here: sign in with the password first.',
      ),
    );
  return reply.code(200).header('cache-control', 'no-store').send(key);
}

/**
 * The sign-in page after `second_factor_enrolment_required` (or a refusal of its codes): the
 * key the browser's challenge enrols; nothing when there is none to enrol.
 */
async function enrolmentPage(
  port: EnrolmentPort | undefined,
  request: FastifyRequest,
  params: URLSearchParams,
  challenge: string | undefined,
): Promise<SignInPageAddition> {
  if (port === undefined || !isEnrolmentStep(params) || challenge === undefined) return null;
  try {
    const enrolmentKey = await port.keyFor(challenge);
    return enrolmentKey === null ? null : { enrolmentKey };
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    request.log.error({ err: error.cause }, 'database unavailable during an enrolment read');
    return 'unavailable';
  }
}

/**
 * Enrolment at sign-in as a way in: its check (last after the password), the challenges its
 * refusals open, its key's route and the sign-in page's enrolment step. Without `enrolment`
 * (factors not required) the route answers 404 and nothing is checked.
 */
export function enrolmentWayIn(
  enrolment: { check: SignInCheck; port: EnrolmentPort } | undefined,
): WayIn {
  const port = enrolment?.port;
  return {
    id: 'signin-enrolment',
    signInChecks: enrolment === undefined ? [] : [enrolment.check],
    challengeOpenedBy: {
      second_factor_enrolment_required: enrolmentPurpose,
      // Mail off: the enrolment waits for an operator's enrolment code.
      enrolment_code_required: enrolmentPurpose,
    },
    routes: [
      {
        action: 'enrolment/totp',
        methods: ['GET'],
        handler: (request, reply, kit) => enrolmentKeyRoute(port, request, reply, kit),
      },
    ],
    signInPage: (request, params, challenge) => enrolmentPage(port, request, params, challenge),
  };
}
