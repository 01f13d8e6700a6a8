import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { PagePaths } from '../paths.js';
import type { User } from '../../users/store.js';
import { record, type AccountEventType } from '../model/events.js';
import type { Checked } from '../../auth/signin/password-proof.js';
import { factorAttempt, type FactorAttemptPorts } from '../model/factor-throttle.js';
import { queueSecurityNotice } from '../model/security-notice.js';
import { readRecoveryCode, recoveryCodeHash } from './recovery-codes.js';
import type { SecretBox } from './secret-box.js';
import { matchingStep, readTotpCode } from './totp-code.js';
import { claimStep, factorSummary, readTotp, useRecoveryCode } from './totp-store.js';

/*
 * The one check of a second factor: sign-in (as a check after the password), re-authentication,
 * a password reset and turning TOTP off all ask it. A code is a guess at a secret: it is charged
 * to the client address as a password is and to the account's own second-factor count, which
 * only a right second factor or an operator clears (model/factor-throttle.ts), and a right one
 * is then claimed once in the store, so the same code (or recovery code) sent twice, or twenty
 * times at once, is right for one request only.
 */

/** What a second factor is proved with: a code of the app, or a recovery code. */
export type SecondFactorProof = 'otp' | 'recovery_code';

export type SecondStepResult =
  /** The account has no second factor: nothing to ask. */
  | { outcome: 'none' }
  /** It has one and neither field was sent. */
  | { outcome: 'missing' }
  | { outcome: 'wrong' }
  | { outcome: 'throttled'; retryAfterSeconds: number }
  | { outcome: 'right'; proof: SecondFactorProof };

export interface SecondStepDeps {
  db: Kysely<Database>;
  box: SecretBox;
  /** The address's and the account's bounds on code guesses (model/factor-throttle.ts). */
  attempts: FactorAttemptPorts;
  now: () => number;
  /** For the notice a used recovery code sends; none when mail is off. */
  mail: MailQueue | undefined;
  /** Where the pages live: the notice's lock link. */
  pages: PagePaths;
  log: { error(fields: object, message: string): void };
}

export interface SecondStepClient {
  ip: string;
  device: string;
  knownDevice: boolean;
  /** The public origin, for the notice's "this wasn't me" link. */
  origin: string;
}

const present = (value: unknown) => typeof value === 'string' && value !== '';

/** A second-factor event in the owner's record and, mail on, its notice, in one transaction. */
async function recordWithNotice(
  deps: SecondStepDeps,
  user: User,
  client: SecondStepClient,
  event: { type: AccountEventType; detail: Record<string, unknown> },
  values: { change: string; recoveryCodesLeft?: string },
): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await record(trx, {
      userId: user.id,
      type: event.type,
      ip: client.ip,
      device: client.device,
      detail: event.detail,
    });
    if (deps.mail !== undefined)
      await queueSecurityNotice(trx, deps.mail, {
        kind: 'second-factor-notice',
        account: user,
        origin: client.origin,
        pages: deps.pages,
        now: deps.now(),
        values,
      });
  });
}

/** The recovery code's use recorded, with its notice saying how many are left. */
async function recordRecoveryUse(
  deps: SecondStepDeps,
  user: User,
  client: SecondStepClient,
): Promise<void> {
  const { recoveryCodes: left } = await factorSummary(deps.db, user.id);
  await recordWithNotice(
    deps,
    user,
    client,
    { type: 'recovery_code_used', detail: { left } },
    {
      change: `A recovery code of your account was just used in place of its authenticator app.`,
      recoveryCodesLeft: String(left),
    },
  );
}

/**
 * The factor step locked by wrong codes: in the owner's record and, mail on, a notice saying
 * that someone who knows the password is guessing, until when, and that a recovery code
 * still works.
 */
async function recordLock(
  deps: SecondStepDeps,
  user: User,
  client: SecondStepClient,
  until: number,
): Promise<void> {
  const minutes = Math.max(1, Math.round((until - deps.now()) / 60_000));
  await recordWithNotice(
    deps,
    user,
    client,
    { type: 'second_factor_locked', detail: { until } },
    {
      change:
        `Wrong two-step sign-in codes (of your authenticator app, or mailed to you) were ` +
        `just entered after your password, ${deps.attempts.policy.maxFailures} since the last ` +
        `right one. Codes are refused for the next ${minutes} minutes (a recovery code still ` +
        `works). Whoever entered them knows your password: if it was not you, change your ` +
        `password now.`,
    },
  );
}

/**
 * One attempt at a second-factor secret of `user` on the account's own count
 * (model/factor-throttle.ts); a wrong one that locks the step is recorded and told. `prove`
 * runs on it, and so does enrolment at sign-in with its mailed code (signin-enrolment.ts).
 */
async function attemptCode<Right>(
  deps: SecondStepDeps,
  user: User,
  client: SecondStepClient,
  check: () => Promise<Checked<Right>>,
  throughLock = false,
) {
  const scope = { userId: user.id, ip: client.ip, throughLock };
  const result = await factorAttempt(deps.attempts, scope, check);
  if (!('throttled' in result) && !result.right && result.lockedUntil !== undefined)
    await recordLock(deps, user, client, result.lockedUntil).catch((error: unknown) => {
      deps.log.error({ err: error, userId: user.id }, 'could not record a second-factor lock');
    });
  return result;
}

const wrong = { right: false as const, seen: undefined };

/** A recovery code of `user`, used up when it is one of theirs. */
async function checkRecoveryCode(
  deps: SecondStepDeps,
  user: User,
  field: unknown,
): Promise<Checked<'recovery_code'>> {
  const code = readRecoveryCode(field);
  const used =
    code !== null &&
    (await useRecoveryCode(deps.db, user.id, recoveryCodeHash(user.id, code), deps.now()));
  return used ? { right: true, value: 'recovery_code' } : wrong;
}

/** A code of the app that sealed `secret`, its time step claimed once. */
async function checkAppCode(
  deps: SecondStepDeps,
  user: User,
  secret: string,
  field: unknown,
): Promise<Checked<'otp'>> {
  const code = readTotpCode(field);
  const opened = deps.box.open(user.id, secret);
  if (opened === null)
    deps.log.error(
      { userId: user.id },
      'a TOTP secret did not open: is the FACTOR_KEY that sealed it still listed?',
    );
  const step = code === null || opened === null ? null : matchingStep(opened, code, deps.now());
  const claimed = step !== null && (await claimStep(deps.db, user.id, secret, step));
  return claimed ? { right: true, value: 'otp' } : wrong;
}

/**
 * Checks `fields.otp` or `fields.recoveryCode` for `user`. An unreadable code counts as a
 * wrong one (charged), so its form tells a guesser nothing.
 */
async function prove(
  deps: SecondStepDeps,
  user: User,
  fields: Partial<Record<string, unknown>>,
  client: SecondStepClient,
): Promise<SecondStepResult> {
  const row = await readTotp(deps.db, user.id);
  if (row === null || row.secret === null) return { outcome: 'none' };
  const secret = row.secret;
  const byRecovery = !present(fields.otp) && present(fields.recoveryCode);
  if (!present(fields.otp) && !byRecovery) return { outcome: 'missing' };
  const result = await attemptCode<SecondFactorProof>(
    deps,
    user,
    client,
    () =>
      byRecovery
        ? checkRecoveryCode(deps, user, fields.recoveryCode)
        : checkAppCode(deps, user, secret, fields.otp),
    byRecovery,
  );
  if ('throttled' in result)
    return { outcome: 'throttled', retryAfterSeconds: result.retryAfterSeconds };
  if (!result.right) return { outcome: 'wrong' };
  if (result.value === 'recovery_code')
    await recordRecoveryUse(deps, user, client).catch((error: unknown) => {
      deps.log.error({ err: error, userId: user.id }, 'could not record a recovery code used');
    });
  return { outcome: 'right', proof: result.value };
}

export function createSecondStep(deps: SecondStepDeps) {
  return {
    /** One attempt at a second-factor secret of `user` on the account's own count. */
    attempt: <Right>(
      user: User,
      client: SecondStepClient,
      check: () => Promise<Checked<Right>>,
      throughLock = false,
    ) => attemptCode(deps, user, client, check, throughLock),
    /** Checks `fields.otp` or `fields.recoveryCode` for `user`. */
    prove: (user: User, fields: Partial<Record<string, unknown>>, client: SecondStepClient) =>
      prove(deps, user, fields, client),
  };
}

export type SecondStep = ReturnType<typeof createSecondStep>;
