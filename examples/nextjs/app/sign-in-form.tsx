'use client';

import { signIn } from 'next-auth/react';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';

export function SignInForm() {
  const router = useRouter();
  const [problem, setProblem] = useState('');
  const [pending, setPending] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    try {
      const result = await signIn('credentials', {
        email: form.get('email'),
        password: form.get('password'),
        redirect: false,
      });
      if (result?.error) {
        // One answer for an unknown email and a wrong password; others when throttled, and
        // (REQUIRE_VERIFIED_EMAIL on Gatehouse) for a right password of an unconfirmed address.
        setProblem(
          result.code === 'rate_limited'
            ? 'Too many attempts: wait a few minutes, then try again.'
            : result.code === 'email_unverified'
              ? 'Confirm your address first: we have sent you a new link.'
              : 'Wrong email or password.',
        );
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
      <button type="submit" disabled={pending}>
        Sign in
      </button>
      {problem && <p role="alert">{problem}</p>}
    </form>
  );
}
