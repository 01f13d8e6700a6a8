import { en } from 'zod/locales';
import * as z from 'zod/mini';
import { auth } from './auth.js';
import { database } from './database.js';
import { hashing } from './hashing.js';
import { http } from './http.js';
import { mail } from './mail.js';
import { metrics } from './metrics.js';
import { exampleOf } from './notes.js';
import { pages } from './pages.js';
import { runtime } from './runtime.js';
import { session } from './session.js';
import { signIn } from './sign-in.js';
import { readFileVariables } from './secret-files.js';

export { defaultHashNice } from './hashing.js';
export { isWeakSecret } from './auth.js';

// zod/mini: the same validation as zod's chained API, at a fraction of its load time and
// memory (measured: full zod was the largest module in the start-up bundle).
z.config(en());

/**
 * One schema per capability (src/config/), each reading its variables and giving its part of
 * the config. A variable several of them read (NODE_ENV, PORT) is one schema they share.
 */
export const capabilities = (requireSecret: boolean) =>
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
    mail,
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

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** The variables a capability reads, by name, each with its schema. */
export function variablesOf(capability: Capability): Readonly<Record<string, z.core.$ZodType>> {
  return (capability._zod.def.in as z.ZodMiniObject)._zod.def.shape;
}

/** zod's own wording of a problem, followed by a valid example of the variable. */
function withExample(capability: Capability) {
  const variables = variablesOf(capability);
  return (issue: z.core.$ZodRawIssue) => {
    const message = z.config().localeError?.(issue);
    const text = typeof message === 'string' ? message : message?.message;
    const name = String(issue.path?.[0]);
    const variable = Object.hasOwn(variables, name) ? variables[name] : undefined;
    const example = variable === undefined ? undefined : exampleOf(variable);
    return text === undefined || example === undefined ? text : `${text} (e.g. ${name}=${example})`;
  };
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
 * Parses the environment once; every problem names its variable. `AUTH_SECRET_FILE` and
 * `DATABASE_URL_FILE` are read here. The users CLI passes `requireSecret: false`: it never
 * signs a token.
 */
export function parseConfig(
  env: NodeJS.ProcessEnv,
  options: { requireSecret?: boolean } = {},
): ConfigResult {
  const files = readFileVariables(env);
  // A Set: a bad variable several capabilities read (NODE_ENV, PORT) is reported once.
  const problems = new Set(files.problems);
  const parts: object[] = [];
  for (const capability of capabilities(options.requireSecret !== false)) {
    const parsed = capability.safeParse(files.env, { error: withExample(capability) });
    if (parsed.success) {
      parts.push(parsed.data);
      continue;
    }
    for (const issue of parsed.error.issues) {
      // A file that could not be used is reported once, by the file's own problem.
      if (!files.failed.has(String(issue.path[0])))
        problems.add(`${issue.path.join('.')}: ${issue.message}`);
    }
  }
  if (problems.size > 0) return { ok: false, problems: [...problems] };
  return { ok: true, config: deepFreeze(Object.assign({}, ...parts) as Config) };
}
