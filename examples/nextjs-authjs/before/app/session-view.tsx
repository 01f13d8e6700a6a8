'use client';

import { signIn, signOut, useSession } from 'next-auth/react';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';

// The browser's view: useSession() asks /api/auth/session; the form signs in with the
// Credentials provider, and the button signs out.
export function SessionView() {
  const { data: session, status } = useSession();
  const router = useRouter();
  const [problem, setProblem] = useState('');

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const result = await signIn('credentials', {
      email: form.get('email'),
      password: form.get('password'),
      redirect: false,
    });
    setProblem(result?.error ? 'Wrong email or password.' : '');
    router.refresh();
  }

  async function leave() {
    await signOut({ redirect: false });
    router.refresh();
  }

  const user = session?.user;
  return (
    <>
      <p>
        Browser, useSession():{' '}
        <span id="client-session" data-status={status}>
          {user ? `Signed in as ${user.name} (id ${user.id})` : status}
        </span>
      </p>
      {status === 'authenticated' && (
        <button type="button" onClick={() => void leave()}>
          Sign out
        </button>
      )}
      {status === 'unauthenticated' && (
        <form onSubmit={(event) => void submit(event)}>
          <label>
            Email <input name="email" type="email" autoComplete="username" required />
          </label>{' '}
          <label>
            Password{' '}
            <input name="password" type="password" autoComplete="current-password" required />
          </label>{' '}
          <button type="submit">Sign in</button>
          {problem && <p role="alert">{problem}</p>}
        </form>
      )}
    </>
  );
}
