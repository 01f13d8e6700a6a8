import * as z from 'zod/mini';
import { list, trimmedText } from './read/kinds.js';
import { noted } from './read/notes.js';

/** How far ahead LEGACY_SESSIONS_UNTIL may be: an old secret is not a key for ever. */
export const legacyDaysMax = 90;
const dayMs = 86_400_000;
const untilExample = () => new Date(Date.now() + 30 * dayMs).toISOString().slice(0, 10);

/**
 * Sessions carried over from the Auth.js app a deployment replaces (adoption spec §3): its old
 * `AUTH_SECRET`s, and the date after which no old session cookie is exchanged any more. Both or
 * neither. The date is read once, at start-up: at most 90 days ahead then.
 */
export const legacySessions = z.pipe(
  z
    .object({
      LEGACY_AUTH_SECRET: noted(list(), { example: 'the old app’s AUTH_SECRET' }),
      LEGACY_SESSIONS_UNTIL: noted(trimmedText(), { example: '(a date at most 90 days ahead)' }),
    })
    .check(
      z.superRefine((e, ctx) => {
        const problem = (path: string, message: string) =>
          ctx.addIssue({ code: 'custom', path: [path], message });
        const secrets = e.LEGACY_AUTH_SECRET.length > 0;
        const until = e.LEGACY_SESSIONS_UNTIL;
        if (secrets && until === undefined)
          problem(
            'LEGACY_SESSIONS_UNTIL',
            `is needed with LEGACY_AUTH_SECRET: the date old sessions stop being taken, at most ${legacyDaysMax} days ahead, e.g. LEGACY_SESSIONS_UNTIL=${untilExample()}`,
          );
        if (!secrets && until !== undefined)
          problem(
            'LEGACY_AUTH_SECRET',
            'is needed with LEGACY_SESSIONS_UNTIL: the old app’s AUTH_SECRET (several, comma-separated), e.g. LEGACY_AUTH_SECRET=<the old AUTH_SECRET>',
          );
        if (until === undefined) return;
        const at = untilOf(until);
        if (Number.isNaN(at))
          problem(
            'LEGACY_SESSIONS_UNTIL',
            `must be an ISO 8601 date or time, e.g. LEGACY_SESSIONS_UNTIL=${untilExample()}`,
          );
        else if (at > Date.now() + legacyDaysMax * dayMs)
          problem(
            'LEGACY_SESSIONS_UNTIL',
            `must be at most ${legacyDaysMax} days ahead, e.g. LEGACY_SESSIONS_UNTIL=${untilExample()}`,
          );
      }),
    ),
  z.transform((e) => ({
    /** Old sessions to exchange; undefined: none are taken. */
    legacySessions:
      e.LEGACY_AUTH_SECRET.length > 0 && e.LEGACY_SESSIONS_UNTIL !== undefined
        ? {
            secrets: e.LEGACY_AUTH_SECRET,
            /** Epoch milliseconds: past it no old cookie is taken. */
            untilMs: untilOf(e.LEGACY_SESSIONS_UNTIL),
          }
        : undefined,
  })),
);

/** A date (the end of that day, UTC) or a time, as epoch milliseconds; NaN when neither. */
function untilOf(text: string): number {
  if (/^\d{4}-\d\d-\d\d$/.test(text)) return Date.parse(`${text}T23:59:59.999Z`);
  return /^\d{4}-\d\d-\d\dT/.test(text) ? Date.parse(text) : Number.NaN;
}
