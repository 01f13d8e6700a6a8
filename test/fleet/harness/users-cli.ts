// The users CLI, run as an operator runs it (`node dist/gatehouse-cli.cjs users …`), against
// the fleet's database; passwords go in on stdin, never in arguments. The tests' own runNode
// does it: the built entry point, its own environment and stdin.
import { runNode, type Finished } from '../../helpers/spawn.ts';

export type CliResult = Finished;

/** Resolves to `{ code, stdout, stderr }`; never rejects for a non-zero exit. */
export function runUsers(databaseUrl: string, args: string[], stdin = ''): Promise<CliResult> {
  return runNode(
    'gatehouse-cli.cjs',
    ['users', ...args],
    { HOME: process.env.HOME ?? '', DATABASE_URL: databaseUrl },
    stdin,
  );
}

/** Adds a user; rejects with the CLI's own words when it refuses. */
export async function addUser(
  databaseUrl: string,
  email: string,
  password: string,
): Promise<CliResult> {
  const result = await runUsers(
    databaseUrl,
    ['add', '--email', email, '--password-stdin'],
    password,
  );
  if (result.code !== 0)
    throw new Error(`users add ${email} exited ${result.code}: ${result.stderr}`);
  return result;
}
