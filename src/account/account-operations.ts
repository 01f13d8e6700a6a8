import type { FormFailure } from '../pages/account/account-notices.js';
import type { AccountOperation, FormOperation } from './action.js';
import { reauthenticatedByTypedPassword } from './adapter.js';
import { changeEmail, plausibleNewEmail } from './email/change-email.js';
import { resendVerification } from './email/resend-verification.js';
import { verifyEmail } from './email/verify-address.js';
import { accessTokenOperations } from './access-tokens/actions.js';
import { acceptInvitationAction } from './invitation/accept.js';
import { lockAccountAction } from './lock/lock.js';
import type { PagePaths } from './paths.js';
import { forgotPassword } from './reset/forgot.js';
import { resetPasswordAction } from './reset/reset.js';
import { changePassword } from './self/change-password.js';
import { listOwnEvents } from './self/list-events.js';
import { updateProfile } from './self/profile.js';
import { reauthenticate } from './self/reauthenticate.js';
import { listOwnSessions, revokeOtherSessions, revokeOwnSession } from './self/sessions.js';
import { showAccount } from './self/show.js';
import { signUpAction } from './signup/signup.js';
import { waysInOperations } from './ways-in.js';

/**
 * The repeated new password must match. Page-only: without script a person cannot see what
 * they typed, and without mail (or before the reset flow) a mistyped new password would lock
 * them out at their next sign-in. API clients send `newPassword` once.
 */
const repeated = (body: Record<string, unknown>): FormFailure | undefined =>
  body.newPasswordRepeat === body.newPassword
    ? undefined
    : { code: 'password_mismatch', message: 'The new passwords differ.' };

/** The account's own operations; each way in adds its rows from its folder (totp/, passkeys/). */
const ownOperations: readonly AccountOperation[] = [
  { path: '', method: 'GET', guard: 'session', action: showAccount },
  {
    path: '/profile',
    method: 'POST',
    guard: 'session',
    action: updateProfile,
    form: { name: 'profile', keep: ['name'] },
  },
  { path: '/reauthenticate', method: 'POST', guard: 'session', action: reauthenticate },
  {
    path: '/password/change',
    method: 'POST',
    guard: 'session',
    action: changePassword,
    form: { name: 'password', keep: [], precheck: repeated },
  },
  {
    path: '/password/forgot',
    method: 'POST',
    guard: 'none',
    action: forgotPassword,
    status: 202,
    needsMail: true,
  },
  {
    path: '/password/reset',
    method: 'POST',
    guard: 'none',
    action: resetPasswordAction,
    needsMail: true,
  },
  { path: '/lock', method: 'POST', guard: 'none', action: lockAccountAction, needsMail: true },
  // Not a mail flow: `gatehouse users invite --print-link` works without mail.
  { path: '/invitation/accept', method: 'POST', guard: 'none', action: acceptInvitationAction },
  { path: '/email/verify', method: 'POST', guard: 'none', action: verifyEmail, needsMail: true },
  {
    path: '/email/verification',
    method: 'POST',
    guard: 'session',
    action: resendVerification,
    status: 202,
    needsMail: true,
    form: {
      name: 'verification',
      keep: [],
      doneOf: (answer) =>
        (answer as { status?: string }).status === 'already_verified' ? 'verified' : 'verification',
    },
  },
  {
    path: '/email/change',
    method: 'POST',
    guard: 'recent',
    action: changeEmail,
    status: 202,
    needsMail: true,
    form: {
      name: 'email',
      keep: ['email'],
      precheck: plausibleNewEmail,
      typedPassword: reauthenticatedByTypedPassword,
    },
  },
  {
    path: '/signup',
    method: 'POST',
    guard: 'none',
    action: signUpAction,
    status: 202,
    needsMail: true,
  },
  { path: '/events', method: 'GET', guard: 'session', action: listOwnEvents },
  { path: '/sessions', method: 'GET', guard: 'session', action: listOwnSessions },
  {
    path: '/sessions/revoke-others',
    method: 'POST',
    guard: 'session',
    action: revokeOtherSessions,
    form: { name: 'sessions', keep: [] },
  },
  {
    path: '/sessions/:id/revoke',
    method: 'POST',
    guard: 'session',
    action: revokeOwnSession,
    form: { name: 'session', keep: [] },
  },
];

/** Every /api/account operation, read as a table: its route, its guard, its form if any. */
export const allOperations: readonly AccountOperation[] = [
  ...ownOperations,
  ...accessTokenOperations,
  ...waysInOperations,
];

/** What is served: mail flows with mail on, second factors' with SECOND_FACTOR not off. */
export interface Served {
  mail: boolean;
  factors: boolean;
}

/** The operations served with `served`. */
export const servedOperations = (served: Served): AccountOperation[] =>
  allOperations.filter(
    (operation) =>
      (operation.needsMail !== true || served.mail) &&
      (operation.needsFactors !== true || served.factors),
  );

/** The operations with a form on the account page, each with the path it posts to. */
export const servedForms = (served: Served, pages: PagePaths): [string, FormOperation][] =>
  servedOperations(served).flatMap((operation) =>
    operation.form === undefined
      ? []
      : [[`${pages.account}${operation.form.path ?? operation.path}`, operation as FormOperation]],
  );

/** The account page's paths: the page, and its forms. */
export const accountPagePaths = (pages: PagePaths, served: Served): string[] => [
  pages.account,
  ...servedForms(served, pages).map(([path]) => path),
];
