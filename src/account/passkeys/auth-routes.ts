import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PagePaths } from '../paths.js';
import * as z from 'zod/mini';
import { authBasePath } from '../../auth/bridge/auth-config.js';
import { settleCallbackUrl } from '../../auth/cookies/callback-url.js';
import { parseCookies } from '../../auth/cookies/cookies.js';
import { isSecure, originOf } from '../../auth/request/request-site.js';
import {
  challengeCookieName,
  challengeDigest,
  challengeTtlSeconds,
  clearChallenge,
  openChallenge,
  sealChallenge,
  type RegisterData,
} from './webauthn-challenge.js';
import { HttpError } from '../../http/errors.js';
import type { SignedIn } from '../action.js';
import { clientOf } from '../adapter.js';
import type { Guards } from '../guards.js';
import { readBody } from '../request-body.js';
import { displayName } from '../display-name.js';
import {
  authenticationOptions,
  parseResponse,
  registrationOptions,
  relyingPartyOf,
  verifyRegistration,
} from './ceremony.js';
import { addPasskey, type EnrolmentPorts } from './enrolment.js';

/*
 * Auth.js's Passkey provider's two routes, as their way in mounts them (./way-in.ts):
 * the options (`GET /api/auth/webauthn-options/passkey`) and the registration half of the
 * callback. The sign-in half goes through Auth.js's credentials callback (./assertion.ts).
 */

export interface PasskeyRoutePorts extends EnrolmentPorts {
  secrets: readonly string[];
  authUrl: string | undefined;
  /** Where the pages live (the notice's lock link). */
  pages: PagePaths;
  guards: () => Guards;
  assertCsrf: () => (request: FastifyRequest, body: Record<string, unknown>) => void;
}

/** Auth.js's own refusals of the options route: `{"error": …}` with 400. */
const authjsRefusal = (reply: FastifyReply, error: 'Invalid action' | 'Invalid request') =>
  reply.code(400).header('cache-control', 'no-store').send({ error });

/** Auth.js's answer to a callback: 302 to `url`, or `{url}` for `X-Auth-Return-Redirect`. */
function callbackAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  url: string,
  secure: boolean,
): FastifyReply {
  reply.header('set-cookie', clearChallenge(secure)).header('cache-control', 'no-store');
  if (request.headers['x-auth-return-redirect'] !== undefined) return reply.code(200).send({ url });
  return reply.code(302).header('location', url).send();
}

const registerFields = z.object({
  name: z.optional(displayName),
});

/** The name a passkey gets when none is given: where it was made, and when. */
function defaultName(now: number): string {
  const day = new Date(now).toISOString().slice(0, 10);
  return `Passkey added ${day}`;
}

/** The signed-in session, or null (a store failure is still 503). */
const signedInOrNull = (ports: PasskeyRoutePorts, request: FastifyRequest) =>
  ports
    .guards()
    .session(request)
    .catch((error: unknown): SignedIn | null => {
      if (error instanceof HttpError && error.code === 'unauthenticated') return null;
      throw error;
    });

/** The options, their challenge sealed in Auth.js's challenge cookie. */
async function sendOptions(
  ports: PasskeyRoutePorts,
  reply: FastifyReply,
  secure: boolean,
  now: number,
  answer: { action: 'authenticate' | 'register'; options: { challenge: string } },
  registerData?: RegisterData,
): Promise<FastifyReply> {
  const cookie = await sealChallenge(
    ports.secrets,
    secure,
    {
      challenge: answer.options.challenge,
      ...(registerData !== undefined && { registerData }),
    },
    now,
  );
  return reply
    .code(200)
    .header('set-cookie', cookie)
    .header('cache-control', 'no-store')
    .send(answer);
}

/**
 * `GET /api/auth/webauthn-options/passkey[?action=authenticate|register]`, decided as Auth.js
 * decides (`inferWebAuthnOptions`) but never from an e-mail: `authenticate` (or nothing, for
 * a visitor) gets the same discoverable options whoever asks; `register` needs a recent
 * session and never creates an account. The challenge goes in Auth.js's challenge cookie.
 */
async function passkeyOptions(
  ports: PasskeyRoutePorts,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { action } = request.query as Record<string, unknown>;
  if (action !== undefined && action !== 'authenticate' && action !== 'register') {
    return authjsRefusal(reply, 'Invalid action');
  }
  const secure = isSecure(request, ports.authUrl);
  const rp = relyingPartyOf(originOf(request, ports.authUrl));
  const now = ports.now();
  if (action === 'authenticate' || action === undefined) {
    // A signed-in browser must say what it wants, as in Auth.js.
    if (action === undefined && (await signedInOrNull(ports, request)) !== null) {
      return authjsRefusal(reply, 'Invalid request');
    }
    const options = await authenticationOptions(rp);
    return sendOptions(ports, reply, secure, now, { action: 'authenticate', options });
  }
  const signedIn = await signedInOrNull(ports, request);
  if (signedIn === null) return authjsRefusal(reply, 'Invalid request');
  await ports.guards().recent(signedIn);
  const { user } = signedIn;
  const existing = await ports.store.credentialIds(user.id);
  const options = await registrationOptions(rp, user, existing);
  return sendOptions(
    ports,
    reply,
    secure,
    now,
    { action: 'register', options },
    { id: user.id, email: user.email, name: user.name },
  );
}

/**
 * `POST /api/auth/callback/passkey` with `action=register`: the CSRF token (as every account
 * POST), a recent session of the user the challenge was issued to, the challenge once, and a
 * registration response that verifies. The passkey is added with its event and notice; the
 * session goes on (no new one). Success and failure answer as Auth.js's callback does.
 */
async function registerPasskey(
  ports: PasskeyRoutePorts,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const body = readBody(request);
  ports.assertCsrf()(request, body);
  const guards = ports.guards();
  const signedIn = await guards.session(request);
  await guards.recent(signedIn);
  const parsed = registerFields.safeParse(body);
  const name = parsed.success ? parsed.data.name : undefined;
  const secure = isSecure(request, ports.authUrl);
  const origin = originOf(request, ports.authUrl);
  const refused = `${origin}${authBasePath}/error?error=WebAuthnVerificationError`;
  const cookie = parseCookies(request.headers.cookie).get(challengeCookieName(secure));
  const challenge = await openChallenge(ports.secrets, secure, cookie);
  const response = parseResponse(body.data);
  const { user } = signedIn;
  if (challenge?.registerData?.id !== user.id || response === null) {
    return callbackAnswer(request, reply, refused, secure);
  }
  const expiresAt = ports.now() + challengeTtlSeconds * 1000;
  if (!(await ports.store.spendChallenge(challengeDigest(challenge.challenge), expiresAt))) {
    return callbackAnswer(request, reply, refused, secure);
  }
  const rp = relyingPartyOf(origin);
  const verified = await verifyRegistration(rp, response.value, challenge.challenge);
  if (verified === null) return callbackAnswer(request, reply, refused, secure);
  const added = await addPasskey(
    ports,
    user,
    { ...verified, name: name ?? defaultName(ports.now()) },
    clientOf(request, (r) => originOf(r, ports.authUrl), ports.pages),
  );
  if (added === null) return callbackAnswer(request, reply, refused, secure);
  request.log.info({ userId: user.id, passkey: added }, 'passkey added');
  const callbackUrl =
    typeof body.callbackUrl === 'string' ? settleCallbackUrl(body.callbackUrl, origin) : undefined;
  return callbackAnswer(request, reply, callbackUrl ?? origin, secure);
}

export function createPasskeyRoutes(ports: PasskeyRoutePorts) {
  return {
    options: (request: FastifyRequest, reply: FastifyReply) =>
      passkeyOptions(ports, request, reply),
    register: (request: FastifyRequest, reply: FastifyReply) =>
      registerPasskey(ports, request, reply),
  };
}
