import { en } from 'zod/locales';
import * as z from 'zod/mini';
import { accounts } from './accounts.js';
import { admin } from './admin.js';
import { auth } from './auth.js';
import { database } from './database.js';
import { factors } from './second-factor.js';
import { hashing } from './hashing.js';
import { legacySessions } from './legacy-sessions.js';
import { http } from './http.js';
import { identityProviders } from './identity-providers.js';
import type { MailCatalogue } from '../mail/catalogue.js';
import { mail } from './mail.js';
import { metrics } from './metrics.js';
import { exampleOf } from './read/notes.js';
import { pages } from './pages.js';
import { runtime } from './runtime.js';
import { session } from './session.js';
import { signIn } from './sign-in.js';
import { tokens } from './tokens.js';
import { webhooks } from './webhooks.js';
import { fileVariables, readFileVariables } from './read/secret-files.js';
import { keyReuse } from './read/key-reuse.js';

export { defaultHashNice } from './hashing.js';
export { isWeakSecret } from './auth.js';

// zod/mini: the same validation as zod's chained API, at a fraction of its load time and
// memory (measured: full zod was the largest module in the start-up bundle).
z.config(en());

/**
 * One schema per capability (src/config/), each reading its variables and giving its part of
 * the config. A variable several of them read (NODE_ENV, PORT) is one schema they share.
 */
export const capabilities = (requireSecret: boolean, mails?: MailCatalogue) =>
  [
    runtime,
    http,
    database,
    auth(requireSecret),
    session,
    signIn,
    hashing,
    metrics,
    pages,
    accounts,
    factors,
    mail(mails),
    admin,
    webhooks,
    identityProviders,
    legacySessions,
    tokens,
  ] as const;

type Capability = ReturnType<typeof capabilities>[number];
/** The parts as one object: A | B becomes A & B. */
type Intersection<U> = (U extends unknown ? (part: U) => void : never) extends (
  part: infer I,
) => void
  ? I
  : never;
/** What `deepFreeze` makes of it. */
type DeepReadonly<T> = T extends readonly (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** Every capability's part, as it parses: the schemas are the type. */
export type Config = DeepReadonly<Intersection<z.output<Capability>>>;

export type ConfigResult =
  { ok: true; config: Config; warnings: string[] } | { ok: false; problems: string[] };

/** The variables a capability reads, by name, each with its schema. */
export function variablesOf(capability: Capability): Readonly<Record<string, z.core.$ZodType>> {
  return (capability._zod.def.in as z.ZodMiniObject)._zod.def.shape;
}

/**
 * zod's own wording ("Invalid input: expected number, received NaN") in an operator's words,
 * for a schema that does not word its problem itself (the kinds in kinds.ts all do).
 */
export function plainWording(issue: z.core.$ZodIssue): string {
  // zod's English messages all start so; Gatehouse's own ones ("must …", "is …") never do.
  if (!/^(Invalid|Too (big|small))/.test(issue.message)) return issue.message;
  switch (issue.code) {
    case 'invalid_value':
      return `must be one of ${issue.values.map(String).join(', ')}`;
    case 'too_small':
      return issue.origin === 'string'
        ? `must be at least ${String(issue.minimum)} characters long`
        : `must be at least ${String(issue.minimum)}`;
    case 'too_big':
      return issue.origin === 'string'
        ? `must be at most ${String(issue.maximum)} characters long`
        : `must be at most ${String(issue.maximum)}`;
    case 'invalid_type':
      return issue.expected === 'number' ? 'must be a number' : issue.message;
    case 'invalid_format':
      if (issue.format === 'url') return 'must be a full URL';
      if (issue.format === 'email') return 'must be an email address';
      return issue.message;
    default:
      return issue.message;
  }
}

/**
 * A problem as the operator reads it: the variable, what is wrong, and a valid example unless
 * the message already gives one (AUTH_SECRET has none: its messages say how to make one) or the
 * problem is not the value's form (a custom issue with `params: { example: false }`).
 */
function describeIssue(capability: Capability, issue: z.core.$ZodIssue): string {
  const name = String(issue.path[0]);
  const variables = variablesOf(capability);
  const variable = Object.hasOwn(variables, name) ? variables[name] : undefined;
  const example = variable === undefined ? undefined : exampleOf(variable);
  const message = plainWording(issue);
  const noExample =
    example === undefined ||
    message.includes('e.g.') ||
    (issue.code === 'custom' && issue.params?.example === false);
  const shown = noExample ? '' : ` (e.g. ${name}=${example})`;
  return `${issue.path.join('.')}: ${message}${shown}`;
}

/**
 * Every variable Gatehouse reads, from the schemas themselves and the `_FILE` variants, so a
 * variable added to a schema is known here at once (the start-up warnings use it).
 */
export function knownVariables(): ReadonlySet<string> {
  const names = new Set<string>();
  for (const capability of capabilities(true))
    for (const name of Object.keys(variablesOf(capability))) names.add(name);
  for (const name of fileVariables) names.add(`${name}_FILE`);
  return names;
}

/** Frozen all the way down (as Fastify's initial config): no setting changes after start-up. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * Parses the environment once; every problem names its variable. The `_FILE` variants are read
 * here. `warnings` are for the operator at start (a key shared in development). The users CLI passes `requireSecret: false`: it never
 * signs a token. `mails`: every kind of mail the service sends (`registeredMails`, which the
 * service and the CLI pass); without it, only mail/'s own kinds.
 */
export function parseConfig(
  env: NodeJS.ProcessEnv,
  options: { requireSecret?: boolean; mails?: MailCatalogue } = {},
): ConfigResult {
  const files = readFileVariables(env);
  // A Set: a bad variable several capabilities read (NODE_ENV, PORT) is reported once.
  const problems = new Set(files.problems);
  const parts: object[] = [];
  for (const capability of capabilities(options.requireSecret !== false, options.mails)) {
    const parsed = capability.safeParse(files.env);
    if (parsed.success) {
      parts.push(parsed.data);
      continue;
    }
    for (const issue of parsed.error.issues) {
      // A file that could not be used is reported once, by the file's own problem.
      if (!files.failed.has(String(issue.path[0]))) problems.add(describeIssue(capability, issue));
    }
  }
  if (problems.size > 0) return { ok: false, problems: [...problems] };
  const config = deepFreeze(Object.assign({}, ...parts) as Config);
  const reuse = keysReused(config);
  // Production refuses a key that is another's; development says so and goes on.
  if (config.env === 'production' && reuse.refused.length > 0)
    return { ok: false, problems: reuse.refused };
  return {
    ok: true,
    config,
    warnings: [...(config.env === 'production' ? [] : reuse.refused), ...reuse.rotating],
  };
}

/** The keys and secrets of the config that must each be material of their own (key-reuse.ts). */
function keysReused(config: Config) {
  const advice = 'generate one with: openssl rand -base64 33';
  return keyReuse([
    { variable: 'AUTH_SECRET', keys: config.authSecrets, advice },
    { variable: 'FACTOR_KEY', keys: config.secondFactor.keys, advice },
    { variable: 'AUDIT_KEY', keys: config.auditKeys, advice },
    {
      variable: 'WEBHOOK_SECRET',
      keys: config.webhooks === undefined ? [] : [config.webhooks.secret],
      advice: 'generate one with: WEBHOOK_SECRET=whsec_$(openssl rand -base64 32)',
    },
  ]);
}
