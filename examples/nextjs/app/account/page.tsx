import Link from 'next/link';
import { redirect } from 'next/navigation';
import { gatehousePages } from '../../lib/account-api';
import { sessionFromGatehouse } from '../../lib/gatehouse';
import { ChangeEmailForm, ChangePasswordForm, ResendVerificationButton } from './account-forms';

// This app's own /account page (Gatehouse's lives at /api/auth/account, so this one stays the
// app's). proxy.ts sends visitors without a session cookie home first, as for /dashboard, and
// this page asks Gatehouse. Its forms post to Gatehouse's account API; Gatehouse's page is
// linked for the rest.
export default async function Account() {
  const session = await sessionFromGatehouse();
  if (!session) redirect('/');
  return (
    <main>
      <h1>Your account</h1>
      <p id="account-email">
        {session.user.name} · {session.user.email}
      </p>
      <h2>Password</h2>
      <ChangePasswordForm />
      <h2>Email address</h2>
      <ResendVerificationButton />
      <ChangeEmailForm />
      <h2>Security</h2>
      <p>
        Where you are signed in, two-step sign-in, passkeys, access tokens and your history are on{' '}
        <a href={gatehousePages.account}>Gatehouse&apos;s account page</a>.
      </p>
      <Link href="/">Home</Link>
    </main>
  );
}
