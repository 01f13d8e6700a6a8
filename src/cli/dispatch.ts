import { parseArgs, type ParseArgsConfig } from 'node:util';
import * as add from './commands/add.js';
import * as audit from './commands/audit.js';
import * as enrolmentCode from './commands/enrolment-code.js';
import * as identities from './commands/identities.js';
import * as importAuthjs from './commands/import-authjs.js';
import * as importUsers from './commands/import-users.js';
import * as invite from './commands/invite.js';
import * as list from './commands/list.js';
import * as mail from './commands/mail-outbox.js';
import * as resetSecondFactor from './commands/reset-second-factor.js';
import * as sessions from './commands/sessions.js';
import * as setPassword from './commands/set-password.js';
import * as state from './commands/state.js';
import * as verifyEmail from './commands/verify-email.js';
import * as tokens from './commands/tokens.js';
import * as webhooks from './commands/webhook-outbox.js';
import { cliCommand } from '../boot/cli-command.js';
import { parseConfig } from '../config/index.js';
import { registeredMails } from '../account/upkeep-registry.js';
import { describeStore } from '../db/open.js';
import { openCliContext, type CliContext } from './context.js';
import { CliError } from './prompt.js';
import { closest } from './suggest.js';
import {
  mailUsage,
  auditUsage,
  importUsage,
  tokensUsage,
  webhooksUsage,
  usersUsage,
} from './usage.js';

type Values = Record<string, string | boolean | undefined>;

interface Command {
  help: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** The one positional argument it takes (`mail show ID`), as `values[positional]`. */
  positional?: string;
  run(context: CliContext, values: Values): Promise<void>;
}

const email = { email: { type: 'string' } } as const;
const commands: Record<string, Command> = {
  add: {
    help: add.help,
    options: {
      ...email,
      name: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      verified: { type: 'boolean' },
    },
    run: add.run,
  },
  list: { help: list.help, options: { json: { type: 'boolean' } }, run: list.run },
  import: {
    help: importUsers.help,
    options: { check: { type: 'boolean' }, json: { type: 'boolean' } },
    positional: 'file',
    run: importUsers.run,
  },
  invite: {
    help: invite.help,
    options: { ...email, name: { type: 'string' }, 'print-link': { type: 'boolean' } },
    run: invite.run,
  },
  'set-password': {
    help: setPassword.help,
    options: { ...email, 'password-stdin': { type: 'boolean' } },
    run: setPassword.run,
  },
  disable: { help: state.disableHelp, options: email, run: state.disable },
  enable: { help: state.enableHelp, options: email, run: state.enable },
  remove: { help: state.removeHelp, options: email, run: state.remove },
  'revoke-sessions': { help: state.revokeHelp, options: email, run: state.revokeSessions },
  sessions: {
    help: sessions.sessionsHelp,
    options: { ...email, json: { type: 'boolean' } },
    run: sessions.list,
  },
  'revoke-session': {
    help: sessions.revokeOneHelp,
    options: { ...email, id: { type: 'string' } },
    run: sessions.revokeOne,
  },
  unlock: { help: state.unlockHelp, options: email, run: state.unlock },
  'verify-email': { help: verifyEmail.help, options: email, run: verifyEmail.run },
  'reset-second-factor': {
    help: resetSecondFactor.help,
    options: { ...email, passkeys: { type: 'boolean' } },
    run: resetSecondFactor.run,
  },
  'enrolment-code': { help: enrolmentCode.help, options: email, run: enrolmentCode.run },
  rename: {
    help: state.renameHelp,
    options: { ...email, name: { type: 'string' } },
    run: state.rename,
  },
  identities: {
    help: identities.listHelp,
    options: { ...email, json: { type: 'boolean' } },
    run: identities.list,
  },
  'remove-identity': {
    help: identities.removeHelp,
    options: { ...email, id: { type: 'string' } },
    run: identities.remove,
  },
  'set-email': {
    help: state.setEmailHelp,
    options: { ...email, 'new-email': { type: 'string' }, verified: { type: 'boolean' } },
    run: state.setEmail,
  },
};

/** What `mail list` and `webhooks list` take: both list a leased outbox. */
const outboxListOptions: Command['options'] = {
  state: { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
};

/** `list` and `retry`, which the mail and webhook outboxes both have. */
function outboxCommands(outbox: {
  listHelp: string;
  list: Command['run'];
  retryHelp: string;
  retry: Command['run'];
}): Record<string, Command> {
  return {
    list: { help: outbox.listHelp, options: outboxListOptions, run: outbox.list },
    retry: { help: outbox.retryHelp, options: {}, positional: 'id', run: outbox.retry },
  };
}

const mailCommands: Record<string, Command> = {
  ...outboxCommands(mail),
  show: { help: mail.showHelp, options: {}, positional: 'id', run: mail.show },
  test: {
    help: mail.testHelp,
    options: { to: { type: 'string' }, 'timeout-seconds': { type: 'string' } },
    run: mail.test,
  },
};

const auditCommands: Record<string, Command> = {
  verify: { help: audit.verifyHelp, options: {}, run: audit.verify },
  seal: { help: audit.sealHelp, options: {}, run: audit.seal },
  export: {
    help: audit.exportHelp,
    options: { since: { type: 'string' } },
    run: audit.exportLines,
  },
};

const webhookCommands: Record<string, Command> = outboxCommands(webhooks);

const groups: Record<
  string,
  { commands: Record<string, Command>; summary: string; usage: (cli: string) => string }
> = {
  users: {
    commands,
    summary: "create, invite, list and change users; end a user's sessions",
    usage: usersUsage,
  },
  mail: {
    commands: mailCommands,
    summary: 'the mail outbox: list, show, retry, and send a test mail',
    usage: mailUsage,
  },
  audit: {
    commands: auditCommands,
    summary: 'the audit log: verify and seal its hash chain, export it as JSON lines',
    usage: auditUsage,
  },
  webhooks: {
    commands: webhookCommands,
    summary: 'the webhook outbox: list deliveries, retry a failed one',
    usage: webhooksUsage,
  },
  tokens: {
    commands: {
      'rotate-key': {
        help: tokens.rotateHelp,
        options: { now: { type: 'boolean' } },
        run: tokens.rotate,
      },
      keys: { help: tokens.keysHelp, options: { json: { type: 'boolean' } }, run: tokens.keys },
    },
    summary: 'the keys session tokens are signed with: list them, rotate them',
    usage: tokensUsage,
  },
  import: {
    commands: {
      authjs: {
        help: importAuthjs.help,
        options: {
          database: { type: 'string' },
          'password-column': { type: 'string' },
          check: { type: 'boolean' },
          json: { type: 'boolean' },
        },
        run: importAuthjs.run,
      },
    },
    summary: "users from another service's database: an Auth.js app's adapter tables",
    usage: importUsage,
  },
};

/**
 * The database a command would work on with this environment, described without a secret, and
 * the variable that chose it; a configuration with problems is only named (a command lists them).
 */
function databaseInUse(): string {
  const result = parseConfig(process.env, { requireSecret: false, mails: registeredMails });
  if (!result.ok) return 'the settings here have problems: any command lists them';
  return `${describeStore(result.config.databaseUrl)} (from ${result.config.databaseVariable})`;
}

/** `gatehouse --help`: every group with one line, how to run it here, and which database. */
function topUsage(cli: string): string {
  const width = Math.max(...Object.keys(groups).map((name) => name.length)) + 3;
  const lines = Object.entries(groups).map(
    ([name, group]) => `  ${name.padEnd(width)}${group.summary} (${cli} ${name} --help)`,
  );
  return `Usage: gatehouse <group> <command> [options]

Groups:
${lines.join('\n')}

Run it as \`npx gatehouse …\` from a checkout's folder (after \`npm run build\`), or as
\`gatehouse …\` in the image, where \`gatehouse serve\` runs the service and
\`gatehouse healthcheck\` checks it. Hints the CLI and the service print are written the
way that runs where they run.

Every command works on the service's database: DATABASE_URL (or DATABASE_URL_FILE) when set,
else the SQLite file $DATA_DIR/gatehouse.db, DATA_DIR being ./data (from the current folder)
unless set. Give a command the settings the service has, or it works on another database.
Here: ${databaseInUse()}`;
}

/**
 * An argument as an error message may show it: a command or option Gatehouse knows, else a
 * placeholder. A stray argument might be a password typed in the wrong place, and error
 * output ends up in terminals, CI logs and support tickets.
 */
function shown(arg: string, known: Iterable<string>): string {
  return [...known].includes(arg) ? `'${arg}'` : '(an argument not shown: it might be a password)';
}

/** "; did you mean X?" naming only the known name, or nothing when none is close. */
function didYouMean(typed: string, known: readonly string[], quote: (name: string) => string) {
  const match = closest(typed, known);
  return match === null ? '' : `; did you mean ${quote(match)}?`;
}

/** Node's parseArgs messages quote the offending argument: say what went wrong without it. */
function describeParseError(error: unknown, options: Iterable<string>): string {
  const code = (error as { code?: string }).code;
  const offending = /'([^']*)'/.exec((error as Error).message)?.[1] ?? '';
  const option = offending.split('=')[0] ?? '';
  switch (code) {
    case 'EXTRA_POSITIONAL':
      return 'unexpected argument after the id; this command takes one id';
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${shown(offending, [])}; this command takes only options`;
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${shown(
        option,
        [...options].map((name) => `--${name}`),
      )}${didYouMean(option.replace(/^-+/, ''), [...options], (name) => `--${name}`)}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return `an option is missing its value, or takes none (${shown(
        option,
        [...options].map((name) => `--${name}`),
      )})`;
    default:
      return 'the arguments could not be read';
  }
}

async function main(argv: string[]): Promise<number> {
  const [groupName, name, ...rest] = argv;
  const cli = cliCommand();
  const asksHelp = (arg: string | undefined) => arg === '--help' || arg === '-h' || arg === 'help';
  // No arguments: the overview, as a usage error (a script that forgot its arguments fails).
  if (groupName === undefined || asksHelp(groupName)) {
    process.stdout.write(`${topUsage(cli)}\n`);
    return groupName === undefined ? 2 : 0;
  }
  const group = Object.hasOwn(groups, groupName) ? groups[groupName] : undefined;
  if (group === undefined) {
    const known = Object.keys(groups);
    throw new CliError(
      `unknown command group ${shown(groupName, known)}${didYouMean(groupName, known, (known) => `'${known}'`)}\n\n${topUsage(cli)}`,
      2,
    );
  }
  if (name === undefined || name === '--help' || name === '-h') {
    process.stdout.write(`${group.usage(cli)}\n`);
    return name === undefined ? 2 : 0;
  }
  const commands = group.commands;
  const command =
    name === undefined ? undefined : Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (command === undefined) {
    throw new CliError(
      `unknown command ${shown(name ?? '', Object.keys(commands))}${didYouMean(
        name ?? '',
        Object.keys(commands),
        (known) => `'${known}'`,
      )}\n\n${group.usage(cli)}`,
      2,
    );
  }
  let values: Values;
  try {
    let positionals: string[];
    ({ values, positionals } = parseArgs({
      args: rest,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: command.positional !== undefined,
    }));
    if (command.positional !== undefined) {
      if (positionals.length > 1)
        throw Object.assign(new Error('more than one positional'), { code: 'EXTRA_POSITIONAL' });
      values[command.positional] = positionals[0];
    }
  } catch (error) {
    // A password given as an argument would already be in shell history: say so plainly.
    const hint = rest.some((arg) => arg.startsWith('--password') && arg !== '--password-stdin')
      ? '\npasswords are never taken from arguments: use the prompt or --password-stdin'
      : '';
    const options = [...Object.keys(command.options), 'help'];
    throw new CliError(`${describeParseError(error, options)}${hint}\n\n${command.help}`, 2);
  }
  if (values.help === true) {
    process.stdout.write(`${command.help}\n`);
    return 0;
  }
  const context = await openCliContext();
  try {
    await command.run(context, values);
  } finally {
    await context.db.destroy();
  }
  return 0;
}

/**
 * Exits once everything written to stdout and stderr has left: a pipe takes 64 KB at a time,
 * and `process.exit` with output still queued would cut `users list --json` short.
 */
function exitWhenWritten(code: number): void {
  process.exitCode = code;
  let pending = 2;
  const written = () => {
    pending -= 1;
    if (pending === 0) process.exit(code);
  };
  process.stdout.write('', written);
  process.stderr.write('', written);
}

main(process.argv.slice(2)).then(
  (code) => exitWhenWritten(code),
  (error: unknown) => {
    if (error instanceof CliError) {
      process.stderr.write(`gatehouse: ${error.message}\n`);
      exitWhenWritten(error.exitCode);
      return;
    }
    const cause =
      error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
    process.stderr.write(
      `gatehouse: ${error instanceof Error ? error.message : String(error)}${cause}\n`,
    );
    exitWhenWritten(1);
  },
);
