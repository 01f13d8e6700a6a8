import { mirroredCount, mirroredUser } from '../../lib/mirror';

// The signed-in person as this app's own table has them: written by Gatehouse's webhooks
// (app/api/gatehouse-webhooks/route.ts), read here without asking Gatehouse.
export function MirroredUser({ id }: { id: string }) {
  const user = mirroredUser(id);
  const count = mirroredCount();
  return (
    <p id="mirror">
      {user
        ? `In this app's own table: ${user.name} <${user.email}>` +
          `${user.emailVerified ? ', address confirmed' : ''}, as of ${user.changedAt}`
        : "Not in this app's own table yet: it is written when Gatehouse's next webhook about you arrives"}{' '}
      ({count} {count === 1 ? 'user' : 'users'} there).
    </p>
  );
}
