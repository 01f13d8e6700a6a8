import type { CliContext } from '../context.js';

export const help = `Usage: gatehouse users list [--json]

Lists every user: email, name, state and id. --json prints one JSON array.`;

export async function run(context: CliContext, values: { json?: boolean }) {
  const users = await context.services.users.list();
  if (values.json === true) {
    const rows = users.map(({ id, email, name, disabled, createdAt }) => ({
      id,
      email,
      name,
      disabled,
      createdAt: new Date(createdAt).toISOString(),
    }));
    context.out(JSON.stringify(rows, null, 2));
    return;
  }
  if (users.length === 0) {
    context.out('no users yet: add one with `npm run users -- add --email <email>`');
    return;
  }
  for (const user of users) {
    context.out(
      `${user.email}\t${user.name}\t${user.disabled ? 'disabled' : 'enabled'}\t${user.id}`,
    );
  }
}
