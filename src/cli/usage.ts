// Each command group's usage, as `gatehouse <group> --help` and a mistyped command print it.

/** Where every command's database comes from, as each group's usage ends. */
export const databaseLine = (cli: string) =>
  `Every command takes --help. The database is DATABASE_URL, else the SQLite file
$DATA_DIR/gatehouse.db (DATA_DIR defaults to ./data); \`${cli} --help\` shows which one is used here.`;

export const mailUsage = (cli: string) => `Usage: gatehouse mail <command> [options]

Commands:
  list              list the outbox (--state, --limit, --json)
  show ID           show one mail (its body too, in development)
  retry ID          queue a failed mail again
  test --to EMAIL   queue a test mail and wait for its delivery

${databaseLine(cli)}`;

export const auditUsage = (cli: string) => `Usage: gatehouse audit <command> [options]

Commands:
  verify            check the audit log's hash chain, checkpoint and seal; exit 1 naming what fails
  seal              seal the head and checkpoint with AUDIT_KEY (once, and after a broken seal)
  export            write the audit log as JSON lines (--since TIME)

${databaseLine(cli)}`;

export const importUsage = (cli: string) => `Usage: gatehouse import <source> [options]

Sources:
  authjs --database URL   an Auth.js app's adapter tables (Prisma, Drizzle, Kysely; SQLite or
                          PostgreSQL): users, identities, passkeys (--password-column TABLE.COLUMN)

A file of users in JSON Lines: ${cli} users import --help.
${databaseLine(cli)}`;

export const tokensUsage = (cli: string) => `Usage: gatehouse tokens <command> [options]

Commands:
  keys              list the keys session tokens are signed with (--json)
  rotate-key        make a new signing key: published now, signing in 6 minutes (--now: at once)

${databaseLine(cli)}`;

export const webhooksUsage = (cli: string) => `Usage: gatehouse webhooks <command> [options]

Commands:
  list              list deliveries (--state, --limit, --json)
  retry ID          queue a failed delivery again

${databaseLine(cli)}`;

export const usersUsage = (cli: string) => `Usage: gatehouse users <command> [options]

Commands:
  add               create a user (password from a hidden prompt or --password-stdin)
  list              list users
  import FILE       import users from JSON Lines, keeping their ids and password hashes
  invite            invite someone by a link to choose their own password (mailed, or --print-link)
  set-password      set a user's password and end their sessions
  disable           refuse sign-in and end the user's sessions
  enable            allow sign-in again
  remove            delete a user and their sessions
  revoke-sessions   end every session of a user
  sessions          list a user's live sessions
  revoke-session    end one of them (--id)
  unlock            lift a sign-in lock from an email
  verify-email      mark a user's address verified
  reset-second-factor  turn off a user's two-step sign-in and void their recovery codes
                       (--passkeys: remove their passkeys too)
  enrolment-code    print a one-time code to enrol an authenticator app at sign-in
                    (SECOND_FACTOR=required: in place of the mailed code)
  rename            change a user's name
  set-email         change a user's email and end their sessions
  identities        list a user's identities at identity providers (Google, GitHub, …)
  remove-identity   remove one of them (--id): it no longer signs in to the account

${databaseLine(cli)}
The outbox: ${cli} mail --help.`;
