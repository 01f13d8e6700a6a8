'use client';

import { signIn } from 'next-auth/react';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { EnrolmentStep, fetchAppKey, type AppKey } from './enrolment-step';

/** What a refused sign-in says, by Gatehouse's `code`. */
function explain(code: string | undefined): string {
  switch (code) {
    case 'rate_limited':
      return 'Too many attempts: wait a few minutes, then try again.';
    case 'email_unverified':
      return 'Confirm your address first: we have sent you a new link.';
    case 'second_factor_invalid':
      return 'That code is not right, or was used already: try the next one your app shows.';
    case 'email_code_invalid':
      return 'That is not the code we mailed you (or your administrator gave you). After five wrong tries it stops working: then sign in again for a new one.';
    case 'email_code_required':
    case 'enrolment_code_required':
      return 'Enter the code we mailed you (or your administrator gave you) too.';
    case 'email_code_limited':
      return 'We have mailed you several codes in the last few minutes: wait a few minutes, then sign in again for a new one.';
    case 'passkey_required':
      return 'Your account signs in with a passkey: use "Sign in with a passkey".';
    default:
      // One answer for an unknown email and a wrong password.
      return 'Wrong email or password.';
  }
}

export function SignInForm() {
  const router = useRouter();
  // 'password' first; 'code' once Gatehouse has accepted the password and wants the second step;
  // 'enrol' when it wants one the account has not set up yet (SECOND_FACTOR=required).
  const [step, setStep] = useState<'password' | 'code' | 'enrol'>('password');
  const [appKey, setAppKey] = useState<AppKey | null>(null);
  const [problem, setProblem] = useState('');
  const [pending, setPending] = useState(false);

  function tookTooLong() {
    // The second step's cookie is gone (five minutes passed, or it was used).
    setStep('password');
    setProblem('That took too long: sign in with your password again.');
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const code = String(form.get('code') ?? '').trim();
    setPending(true);
    try {
      const result = await signIn('credentials', {
        redirect: false,
        // The second step sends only the code: the cookie Gatehouse set after the right
        // password stands for it, so the password is not kept past the first request. Six
        // digits are the authenticator app's code; anything else is a recovery code (not while
        // enrolling: the account has none yet). Enrolling also sends the code Gatehouse mailed
        // to the account's address (stock signIn passes every field on).
        ...(step === 'password'
          ? { email: form.get('email'), password: form.get('password') }
          : step === 'enrol'
            ? { otp: code, emailCode: String(form.get('emailCode') ?? '').trim() }
            : !/^\d{6}$/.test(code)
              ? { recoveryCode: code }
              : { otp: code }),
      });
      if (result?.error) {
        if (result.code === 'second_factor_required') {
          setStep('code');
          setProblem('');
        } else if (
          step === 'password' &&
          (result.code === 'second_factor_enrolment_required' ||
            result.code === 'enrolment_code_required')
        ) {
          // The same cookie reads the key to show: a right code of it, with the code Gatehouse
          // mailed (or, without mail, an administrator's), turns TOTP on and signs in.
          let key: AppKey | null;
          try {
            key = await fetchAppKey();
          } catch {
            // Gatehouse did not give the key (restarted without the setting, its database down).
            setProblem('Two-step sign-in cannot be set up just now: try again in a moment.');
            return;
          }
          if (key === null) return tookTooLong();
          setAppKey(key);
          setStep('enrol');
          setProblem('');
        } else if (step !== 'password' && result.code === 'credentials') {
          tookTooLong();
        } else {
          setProblem(explain(result.code));
        }
        return;
      }
      setProblem('');
      // The server components on this page rendered before the cookie existed: render again.
      router.refresh();
    } catch (error) {
      // A refusal that is not a sign-in answer (a 403 cross_site when Gatehouse's AUTH_URL is
      // not this app's origin) reaches next-auth as an "Invalid URL".
      setProblem(`Sign-in failed (${String(error)}): is AUTH_URL on Gatehouse this app's origin?`);
    } finally {
      setPending(false);
    }
  }

  return (
    <form onSubmit={(event) => void submit(event)}>
      {step === 'password' ? (
        <>
          <p>
            <label>
              Email <input name="email" type="email" autoComplete="username" required />
            </label>
          </p>
          <p>
            <label>
              Password{' '}
              <input name="password" type="password" autoComplete="current-password" required />
            </label>
          </p>
        </>
      ) : step === 'enrol' && appKey ? (
        <EnrolmentStep appKey={appKey} />
      ) : (
        <p>
          <label>
            Code from your authenticator app (or a recovery code){' '}
            <input name="code" autoComplete="one-time-code" autoFocus required />
          </label>
        </p>
      )}
      <button type="submit" disabled={pending}>
        {step === 'password' ? 'Sign in' : 'Verify'}
      </button>
      {problem && <p role="alert">{problem}</p>}
    </form>
  );
}
