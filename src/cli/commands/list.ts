import { cliCommand } from '../../boot/cli-command.js';
import type { CliContext } from '../context.js';
import { secondFactorsByUser, verifiedUserIds } from '../../users/writes.js';

export const help = `Usage: gatehouse users list [--json]

Lists every user under a header row, one a line, tab-separated: email, name, state, id,
whether the address is verified, the second factors (totp, passkey, totp+passkey or none),
then "locked until <time>" when failed sign-ins put a lock on the email (lift it with
\`users unlock\`). For scripts, --json prints one JSON array, with emailVerified (true or
false), secondFactors (a list) and lockedUntil (an ISO time, or null).`;

/** The text table's first line; the lock column is filled only while a lock holds. */
export const listHeader = 'EMAIL\tNAME\tSTATE\tID\tADDRESS\tFACTORS\tLOCK';

/**
 * What a terminal would act on instead of showing: C0 and C1 controls (escape sequences can
 * retitle the window, rewrite earlier lines or hide text), line and paragraph separators, lone
 * surrogates, and format characters such as bidirectional overrides, which reorder what is
 * shown. Zero-width joiner and non-joiner stay: emoji sequences and several scripts need them.
 */
const unprintable = /[\p{Cc}\p{Zl}\p{Zp}\p{Cs}\\]|(?![\u200c\u200d])\p{Cf}/gu;

/** A name or e-mail as text a terminal shows as it is: `\u001b` for ESC, `\\` for a backslash. */
export function printable(text: string): string {
  return text.replace(unprintable, (char) => {
    if (char === '\\') return '\\\\';
    const code = char.codePointAt(0) as number;
    const hex = code.toString(16).padStart(4, '0');
    return code > 0xffff ? `\\u{${hex}}` : `\\u${hex}`;
  });
}

export async function run(context: CliContext, values: { json?: boolean }) {
  const users = await context.services.users.list();
  // One read for every row: the user store's User does not carry verification.
  const verified = await verifiedUserIds(context.db);
  const factors = await secondFactorsByUser(context.db);
  const now = Date.now();
  const locks = await Promise.all(
    users.map(async ({ email }) => {
      const until = await context.services.throttle.emailLockedUntil(email, now);
      return until === null ? null : new Date(until).toISOString();
    }),
  );
  if (values.json === true) {
    const rows = users.map(({ id, email, name, disabled, createdAt }, index) => ({
      id,
      email,
      name,
      disabled,
      emailVerified: verified.has(id),
      secondFactors: factors.get(id) ?? [],
      createdAt: new Date(createdAt).toISOString(),
      lockedUntil: locks[index] ?? null,
    }));
    context.out(JSON.stringify(rows, null, 2));
    return;
  }
  if (users.length === 0) {
    context.out(`no users yet: add one with \`${cliCommand()} users add --email <email>\``);
    return;
  }
  // A header says what each column is; scripts read --json (or skip the first line).
  context.out(listHeader);
  users.forEach((user, index) => {
    // New columns go after the first four, so a script that skips the header and reads four
    // columns goes on working. The lock column comes last and only when a lock holds.
    const lock = locks[index] ? `\tlocked until ${locks[index]}` : '';
    const address = verified.has(user.id) ? 'verified' : 'unverified';
    const second = factors.get(user.id)?.join('+') ?? 'none';
    context.out(
      `${printable(user.email)}\t${printable(user.name)}\t${user.disabled ? 'disabled' : 'enabled'}\t${user.id}\t${address}\t${second}${lock}`,
    );
  });
}
