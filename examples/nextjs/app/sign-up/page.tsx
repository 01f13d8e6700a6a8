'use client';

import Link from 'next/link';
import { useState, type FormEvent } from 'react';
import { gatehousePages, postAccount } from '../../lib/account-api';

// Sign-up as this app's own form (Gatehouse runs with SIGNUP=open). Gatehouse answers the same
// for a new and a taken address and mails a link; the account is made when the link comes back
// with the password chosen here, on Gatehouse's page under the forwarded /api/auth/account.
export default function SignUp() {
  const [said, setSaid] = useState('');

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const answer = await postAccount('/signup', {
      name: String(form.get('name')),
      email: String(form.get('email')),
      password: String(form.get('password')),
    });
    setSaid(
      answer.ok
        ? 'Check your inbox: open the link we mailed you to create the account.'
        : answer.message,
    );
  }

  return (
    <main>
      <h1>Create an account</h1>
      <form onSubmit={(event) => void submit(event)}>
        <p>
          <label>
            Name <input name="name" autoComplete="name" required />
          </label>
        </p>
        <p>
          <label>
            Email <input name="email" type="email" autoComplete="username" required />
          </label>
        </p>
        <p>
          <label>
            Password <input name="password" type="password" autoComplete="new-password" required />
          </label>
        </p>
        <button type="submit">Sign up</button>
      </form>
      {said && <p role="status">{said}</p>}
      <p>
        Or use <a href={gatehousePages.signUp}>Gatehouse&apos;s page</a>. <Link href="/">Home</Link>
      </p>
    </main>
  );
}
