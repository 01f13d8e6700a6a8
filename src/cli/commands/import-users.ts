import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { issuerOf } from '../../config/identity-providers.js';
import { importUsers, type ImportReport } from '../../operator/import/import-users.js';
import { jsonlSource } from '../../operator/import/jsonl-source.js';
import { cliActor, operatorPorts, type CliContext } from '../context.js';
import { CliError } from '../prompt.js';

export const help = `Usage: gatehouse users import FILE [--check] [--json]

Imports users from a JSON Lines file (- for standard input), one user a line:
  {"id": "…", "email": "…", "name": "…", "emailVerified": "2025-01-01T00:00:00Z",
   "passwordHash": "$2b$10$…", "createdAt": "…",
   "identities": [{"provider": "github", "subject": "1234"}],
   "passkeys": [{"credentialId": "…", "publicKey": "…", "counter": 0, "transports": ["internal"]}]}
Only id and email are required. Each user keeps their id. Password hashes are kept as they
are (bcrypt, argon2, scrypt, PBKDF2-SHA256, Django, Better Auth, Firebase scrypt) and become
argon2id at the user's first sign-in. The file imports whole or not at all: a bad line, or an
id, address, identity or passkey that belongs to another user here, is named by line and
field, and nothing is written. A user already here with the same id and address is left as
they are, so a second run of the same file changes nothing. --check reports without
writing (the import runs in a transaction it takes back). Exit status: 0 imported (or, with --check, would be), 1 problems found.`;

/** The report as lines an operator reads. */
export function describeReport(report: ImportReport, check: boolean): string[] {
  const formats = Object.entries(report.hashFormats)
    .map(([format, count]) => `${count} ${format}`)
    .join(', ');
  const lines = [
    `${report.lines} lines read`,
    `${report.added} users ${check ? 'to add' : report.written ? 'added' : 'not added'}` +
      (formats === '' ? '' : ` (password hashes: ${formats})`) +
      `, ${report.identities} identities, ${report.passkeys} passkeys`,
    `${report.unchanged} users already here, left as they are`,
  ];
  for (const problem of report.problems)
    lines.push(`line ${problem.line}: ${problem.field} ${problem.message}`);
  if (report.moreProblems > 0) lines.push(`…and ${report.moreProblems} more problems`);
  if (report.problems.length > 0) lines.push('nothing was written');
  return lines;
}

export async function run(
  context: CliContext,
  values: { file?: string; check?: boolean; json?: boolean },
) {
  const file = values.file;
  if (file === undefined || file === '')
    throw new CliError('name the file to import (- for standard input)', 2);
  let input: NodeJS.ReadableStream;
  if (file === '-') input = process.stdin;
  else {
    try {
      fs.accessSync(file, fs.constants.R_OK);
    } catch {
      throw new CliError(`cannot read ${file}`, 2);
    }
    input = fs.createReadStream(file);
  }
  const check = values.check === true;
  const providers = new Map(
    context.config.identityProviders.map((setting) => [setting.id as string, issuerOf(setting)]),
  );
  const terminal = process.stderr.isTTY === true;
  const report = await importUsers(
    operatorPorts(context),
    jsonlSource(input as Readable, Date.now()),
    {
      check,
      actor: cliActor,
      firebase: context.config.firebaseScrypt,
      issuerOf: (provider) => providers.get(provider) ?? null,
      progress: terminal ? (lines) => process.stderr.write(`\r${lines} lines read`) : undefined,
    },
  );
  if (terminal) process.stderr.write('\r\x1b[K');
  if (values.json === true) context.out(JSON.stringify(report));
  else for (const line of describeReport(report, check)) context.out(line);
  if (report.problems.length > 0 || report.moreProblems > 0)
    throw new CliError('the import was refused: nothing was written', 1);
}
