'use client';

import Link from 'next/link';
import { useState, type FormEvent } from 'react';
import { gatehousePages, postAccount } from '../../lib/account-api';

// "Forgot your password?" as this app's own form: Gatehouse mails a link (the same answer for
// every address, so nobody learns who has an account). The link opens Gatehouse's page for the
// new password, on this origin, under the forwarded /api/auth/account.
export default function ForgotPassword() {
  const [said, setSaid] = useState('');

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const email = String(new FormData(event.currentTarget).get('email'));
    const answer = await postAccount('/password/forgot', { email });
    setSaid(
      answer.ok
        ? 'If an account exists for that address, we have mailed it a link to choose a new password.'
        : answer.message,
    );
  }

  return (
    <main>
      <h1>Forgot your password?</h1>
      <form onSubmit={(event) => void submit(event)}>
        <p>
          <label>
            Email <input name="email" type="email" autoComplete="username" required />
          </label>
        </p>
        <button type="submit">Mail me a link</button>
      </form>
      {said && <p role="status">{said}</p>}
      <p>
        Or use <a href={gatehousePages.forgotPassword}>Gatehouse&apos;s page</a>.{' '}
        <Link href="/">Home</Link>
      </p>
    </main>
  );
}
