import { issuerOf } from '../../config/identity-providers.js';
import {
  AuthjsSourceError,
  describeAuthjsLayout,
  readAuthjsDatabase,
} from '../../operator/import/authjs-database.js';
import { authjsLines } from '../../operator/import/authjs-lines.js';
import { importUsers } from '../../operator/import/import-users.js';
import { cliActor, operatorPorts, type CliContext } from '../context.js';
import { CliError } from '../prompt.js';
import { describeReport } from './import-users.js';

export const help = `Usage: gatehouse import authjs --database URL [--password-column TABLE.COLUMN] [--check] [--json]

Imports the users of an Auth.js / NextAuth app straight from its adapter's tables: the Prisma
and Kysely adapters' "User", "Account" and "Authenticator", or the Drizzle adapter's "user",
"account" and "authenticator", on SQLite (--database file:./prisma/dev.db) or PostgreSQL
(--database postgresql://…). The old database is only read. Each user keeps their id; their
OAuth and OpenID Connect accounts become identities (the providers must be configured here,
AUTH_GITHUB_ID and the like); their authenticators become passkeys that keep working.
--password-column names the app's own password hashes (User.password, or a table with a
userId column), kept as they are and made argon2id at each user's first sign-in. As
\`users import\`: whole or not at all, every problem named, a second run changes nothing,
--check reports without writing. Exit status: 0 imported, 1 problems found, 2 not an
Auth.js database.`;

export async function run(
  context: CliContext,
  values: { database?: string; 'password-column'?: string; check?: boolean; json?: boolean },
) {
  const databaseUrl = values.database;
  if (databaseUrl === undefined || databaseUrl === '')
    throw new CliError('--database is required: the Auth.js app’s database URL', 2);
  const providers = new Map(
    context.config.identityProviders.map((setting) => [setting.id as string, issuerOf(setting)]),
  );
  const check = values.check === true;
  let report;
  try {
    report = await importUsers(
      operatorPorts(context),
      authjsLines(
        readAuthjsDatabase({
          databaseUrl,
          ...(values['password-column'] !== undefined && {
            passwordColumn: values['password-column'],
          }),
          onLayout: (layout) => context.out(`reading ${describeAuthjsLayout(layout)}`),
        }),
      ),
      {
        check,
        actor: cliActor,
        firebase: context.config.firebaseScrypt,
        issuerOf: (provider) => providers.get(provider) ?? null,
      },
    );
  } catch (error) {
    if (error instanceof AuthjsSourceError) throw new CliError(error.message, 2);
    throw error;
  }
  if (values.json === true) context.out(JSON.stringify(report));
  else
    for (const line of describeReport(report, check))
      context.out(line.replace(/^line (\d+):/, 'user $1:'));
  if (report.problems.length > 0 || report.moreProblems > 0)
    throw new CliError('the import was refused: nothing was written', 1);
}
