'use client';

import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { postAccount } from '../../lib/account-api';

/** The fields of a submitted form, as strings. */
const fieldsOf = (event: FormEvent<HTMLFormElement>) =>
  Object.fromEntries(
    [...new FormData(event.currentTarget)].map(([name, value]) => [name, String(value)]),
  );

export function ChangePasswordForm() {
  const router = useRouter();
  const [said, setSaid] = useState('');

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const { currentPassword = '', newPassword = '', repeat = '' } = fieldsOf(event);
    if (newPassword !== repeat) return setSaid('The new passwords differ.');
    const answer = await postAccount('/password/change', { currentPassword, newPassword });
    if (!answer.ok) return setSaid(answer.message);
    // Gatehouse ended every other session and gave this one a new cookie.
    form.reset();
    setSaid('Password changed. Your other sessions are signed out.');
    router.refresh();
  }

  return (
    <form id="change-password" onSubmit={(event) => void submit(event)}>
      <p>
        <label>
          Current password{' '}
          <input name="currentPassword" type="password" autoComplete="current-password" required />
        </label>
      </p>
      <p>
        <label>
          New password{' '}
          <input name="newPassword" type="password" autoComplete="new-password" required />
        </label>
      </p>
      <p>
        <label>
          New password again{' '}
          <input name="repeat" type="password" autoComplete="new-password" required />
        </label>
      </p>
      <button type="submit">Change password</button>
      {said && <p role="status">{said}</p>}
    </form>
  );
}

export function ResendVerificationButton() {
  const [said, setSaid] = useState('');

  async function resend() {
    const answer = await postAccount('/email/verification');
    if (!answer.ok) return setSaid(answer.message);
    setSaid(
      answer.body.status === 'already_verified'
        ? 'Your address is confirmed already.'
        : 'We have mailed you a link to confirm your address.',
    );
  }

  return (
    <p>
      <button type="button" onClick={() => void resend()}>
        Confirm my address
      </button>
      {said && <span role="status"> {said}</span>}
    </p>
  );
}

/**
 * What proves a second factor beside the password, where the account has one: six digits are
 * the authenticator app's code (`otp`), anything else a recovery code; nothing when left empty.
 */
function secondFactorFields(code = ''): Record<string, string> {
  const typed = code.trim();
  if (typed === '') return {};
  return /^\d{6}$/.test(typed) ? { otp: typed } : { recoveryCode: typed };
}

export function ChangeEmailForm() {
  const [said, setSaid] = useState('');

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const { password = '', code, email = '' } = fieldsOf(event);
    // A change of address needs a recent sign-in: the password proves it again first, and the
    // code too where the account has two-step sign-in (Gatehouse says so when it is missing).
    const proved = await postAccount('/reauthenticate', { password, ...secondFactorFields(code) });
    if (!proved.ok) return setSaid(proved.message);
    const answer = await postAccount('/email/change', { email });
    if (!answer.ok) return setSaid(answer.message);
    form.reset();
    setSaid(`We have mailed a link to ${email}: your address changes when you open it.`);
  }

  return (
    <form id="change-email" onSubmit={(event) => void submit(event)}>
      <p>
        <label>
          New address <input name="email" type="email" autoComplete="email" required />
        </label>
      </p>
      <p>
        <label>
          Password{' '}
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
      </p>
      <p>
        <label>
          Code from your authenticator app, or a recovery code (with two-step sign-in){' '}
          <input name="code" autoComplete="one-time-code" />
        </label>
      </p>
      <button type="submit">Change address</button>
      {said && <p role="status">{said}</p>}
    </form>
  );
}
