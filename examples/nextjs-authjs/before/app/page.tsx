import { auth } from '../auth';
import { SessionView } from './session-view';

// A server component: it renders on each request, reading the request's session cookie.
export default async function Home() {
  const user = (await auth())?.user;
  return (
    <main>
      <h1>My app</h1>
      <p>
        Server, auth():{' '}
        <span id="server-session">
          {user ? `Signed in as ${user.name} (id ${user.id})` : 'Not signed in'}
        </span>
      </p>
      <SessionView />
    </main>
  );
}
