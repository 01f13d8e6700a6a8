import * as z from 'zod/mini';
import { boundedString } from './request-body.js';

/** The CLI's bound on a display name (src/cli/commands/state.ts). */
export const nameMaxLength = 200;

// Control characters (Unicode category Cc) would break the pages and mails a name is printed in.
const controlCharacter = /\p{Cc}/u;

/** A display name as a person types it: NFC, trimmed, 1-200 characters, no control characters. */
export const displayName = z
  .pipe(
    // Bounded before NFC and trimming, whose cost it bounds.
    boundedString(nameMaxLength * 4),
    z.transform((raw) => raw.normalize('NFC').trim()),
  )
  .check(
    z.refine(
      (name) => name.length > 0 && name.length <= nameMaxLength && !controlCharacter.test(name),
    ),
  );
