import Link from 'next/link';
import { redirect } from 'next/navigation';
import { sessionFromGatehouse } from '../../lib/gatehouse';
import { MirroredUser } from './mirrored-user';

// proxy.ts already sent visitors without a session cookie away. This page must not show a
// signed-out or revoked session either, so it asks Gatehouse instead of decoding the cookie.
export default async function Dashboard() {
  const session = await sessionFromGatehouse();
  if (!session) redirect('/');
  return (
    <main>
      <h1>Dashboard</h1>
      <p id="dashboard">
        Only for signed-in people: {session.user.name ?? session.user.email}, this page is yours.
      </p>
      <MirroredUser id={session.user.id} />
      <Link href="/">Home</Link>
    </main>
  );
}
