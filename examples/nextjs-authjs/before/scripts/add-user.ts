import bcrypt from 'bcryptjs';
import { db } from '../db/index.ts';
import { users } from '../db/schema.ts';

// `echo PASSWORD | npm run add-user -- EMAIL "NAME"`: a user who signs in with that password.
// The password comes from standard input, never from an argument (shell history, ps).
const [email, name] = process.argv.slice(2);
if (!email || !name) {
  console.error('usage: echo PASSWORD | npm run add-user -- EMAIL "NAME"');
  process.exit(2);
}
let input = '';
for await (const chunk of process.stdin) input += String(chunk);
const password = input.replace(/\r?\n$/, '');
if (password.length < 8) {
  console.error('add-user: the password needs 8 characters or more');
  process.exit(2);
}
const [added] = await db
  .insert(users)
  .values({ email, name, password: await bcrypt.hash(password, 10) })
  .returning({ id: users.id });
console.log(`added ${email} (id ${added?.id})`);
