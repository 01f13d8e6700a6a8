import * as z from 'zod/mini';
import { readEmail } from '../../users/email.js';
import type { ImportRecord } from './import-record.js';

/** What is wrong with a line: the field (dotted, `identities.0.subject`), and why. */
export interface LineProblem {
  field: string;
  message: string;
}

/** An imported user's id: a cuid, a UUID, an ObjectId, a number (Prisma's `Int @id`). */
export const importedIdPattern = /^[A-Za-z0-9_\-:.@]{1,128}$/;
const idText = z.pipe(
  z.union([z.string(), z.int().check(z.nonnegative())], {
    error: 'must be a string (or a whole number)',
  }),
  z.transform(String),
);
const id = idText.check(
  z.refine((value) => importedIdPattern.test(value), {
    error: 'must be 1 to 128 letters, digits or _-:.@',
  }),
);
const subject = idText.check(
  z.refine((value) => value.length >= 1 && value.length <= 255, {
    error: 'must be 1 to 255 characters',
  }),
);

/** An ISO 8601 time as epoch milliseconds; `true` (verified, time unknown) is the import's. */
const time = (error: string) =>
  z.pipe(
    z.string({ error }),
    z.transform((text, ctx) => {
      const at = /^\d{4}-\d\d-\d\dT/.test(text) ? Date.parse(text) : Number.NaN;
      if (Number.isNaN(at)) ctx.issues.push({ code: 'custom', message: error, input: text });
      return at;
    }),
  );

const base64url = (what: string) =>
  z.string().check(
    z.regex(/^[A-Za-z0-9_-]{16,2048}$/, {
      error: `must be the ${what}, base64url without padding`,
    }),
  );

const line = z.strictObject(
  {
    id,
    email: z.string({ error: 'must be an email address' }),
    name: z.optional(
      z.nullable(z.string().check(z.maxLength(200, { error: 'must be at most 200 characters' }))),
    ),
    emailVerified: z.optional(
      z.nullable(z.union([z.boolean(), time('must be an ISO 8601 time, true, false or null')])),
    ),
    passwordHash: z.optional(z.nullable(z.string({ error: 'must be a string or null' }))),
    createdAt: z.optional(z.nullable(time('must be an ISO 8601 time or null'))),
    // Auth.js keeps a picture; Gatehouse does not, so it is read and left.
    image: z.optional(z.nullable(z.string())),
    identities: z._default(
      z
        .array(
          z.strictObject({
            provider: z.string().check(
              z.regex(/^[a-z0-9][a-z0-9-]{0,63}$/, {
                error: 'must be a provider id such as github',
              }),
            ),
            subject,
          }),
        )
        .check(z.maxLength(50, { error: 'must list at most 50' })),
      [],
    ),
    passkeys: z._default(
      z
        .array(
          z.strictObject({
            credentialId: base64url('credential id'),
            publicKey: base64url('COSE public key'),
            counter: z._default(z.int().check(z.nonnegative(), z.lte(2 ** 32 - 1)), 0),
            transports: z._default(
              z.array(z.string().check(z.regex(/^[a-z-]{1,32}$/))).check(z.maxLength(8)),
              [],
            ),
            backedUp: z._default(z.boolean(), false),
          }),
        )
        .check(z.maxLength(50, { error: 'must list at most 50' })),
      [],
    ),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'must be a JSON object') },
);

/** A line as a record, or what is wrong with it (the first problem, by field). */
export function readImportLine(
  text: string,
  importedAt: number,
): { record: ImportRecord } | { problem: LineProblem } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { problem: { field: '(line)', message: 'is not JSON' } };
  }
  const parsed = line.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue?.code === 'unrecognized_keys')
      return {
        problem: { field: issue.keys.join(', '), message: 'is not a field of an import line' },
      };
    const field = issue?.path.length ? issue.path.join('.') : '(line)';
    return { problem: { field, message: issue?.message ?? 'is not valid' } };
  }
  const value = parsed.data;
  const email = readEmail(value.email);
  if (email === null) return { problem: { field: 'email', message: 'must be an email address' } };
  const verified = value.emailVerified;
  return {
    record: {
      id: value.id,
      email,
      name: (value.name ?? '').trim(),
      emailVerifiedAt:
        verified === true ? importedAt : typeof verified === 'number' ? verified : null,
      passwordHash: value.passwordHash ?? null,
      createdAt: value.createdAt ?? null,
      identities: value.identities,
      passkeys: value.passkeys,
    },
  };
}
