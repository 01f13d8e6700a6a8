import Link from 'next/link';
import { auth } from '../auth';
import { sessionFromGatehouse } from '../lib/gatehouse';
import { ClientSession } from './client-session';
import { EmailLinkButton } from './email-link-button';
import { PasskeyButton } from './passkey-button';
import { ProviderButtons } from './provider-buttons';
import { SignInForm } from './sign-in-form';
import { SignOutButton } from './sign-out-button';

function describe(user: { id?: string; name?: string | null; email?: string | null } | undefined) {
  return user ? `Signed in as ${user.name ?? user.email} (id ${user.id})` : 'Not signed in';
}

// A server component: it renders on each request, with the request's cookie.
export default async function Home() {
  const [decoded, asked] = await Promise.all([auth(), sessionFromGatehouse()]);
  return (
    <main>
      <h1>My app</h1>
      <p>
        Server, cookie decoded here: <span id="server-decoded">{describe(decoded?.user)}</span>
      </p>
      <p>
        Server, asking Gatehouse: <span id="server-gatehouse">{describe(asked?.user)}</span>
      </p>
      <ClientSession />
      {asked ? (
        <>
          <p>
            <Link href="/dashboard">Dashboard</Link> · <Link href="/account">Your account</Link>
          </p>
          <SignOutButton />
        </>
      ) : (
        <>
          <SignInForm />
          <PasskeyButton />
          <EmailLinkButton />
          <ProviderButtons />
          <p>
            <Link href="/forgot-password">Forgot your password?</Link> ·{' '}
            <Link href="/sign-up">Create an account</Link>
          </p>
        </>
      )}
    </main>
  );
}
