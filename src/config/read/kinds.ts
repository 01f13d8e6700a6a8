import * as z from 'zod/mini';

// Each kind words its own problem, the same for every way a value can miss (not a number, a
// fraction, out of range): "received NaN" tells an operator nothing. parseConfig adds the
// variable's name in front and a valid example after.

/** A whole number from `min` to `max`; `error` words the problem when it takes more. */
export const wholeNumber = (
  min: number,
  max: number,
  error = `must be a whole number from ${min} to ${max}`,
) => {
  return z.coerce
    .number({ error })
    .check(z.int({ error }), z.minimum(min, { error }), z.maximum(max, { error }));
};

/** A whole number from `min` to `max`; `fallback` when the variable is unset. */
export const integer = (min: number, max: number, fallback: number) =>
  z._default(wholeNumber(min, max), fallback);

/** One of `values`, named in the problem; `fallback` when unset. */
export const oneOf = <const T extends readonly [string, ...string[]]>(
  values: T,
  fallback: T[number],
) => z._default(z.enum(values, { error: `must be one of ${values.join(', ')}` }), fallback);

/** A comma-separated list; blanks around and between entries are dropped. Unset: empty. */
export const list = () =>
  z.pipe(
    z.optional(z.string()),
    z.transform((raw) =>
      (raw ?? '')
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry.length > 0),
    ),
  );

/** A yes/no setting that reads `true`/`false` or `1`/`0`; `fallback` when unset. */
export const trueFalse = (fallback: 'true' | 'false') =>
  z.pipe(
    z._default(
      z.enum(['true', 'false', '1', '0'], { error: 'must be true or false (or 1 or 0)' }),
      fallback,
    ),
    z.transform((value) => value === 'true' || value === '1'),
  );

/** A switch: `on`/`off`, `true`/`false` or `1`/`0`; `on` when unset. */
export const onOff = () =>
  z.pipe(
    z._default(
      z.enum(['on', 'off', 'true', 'false', '1', '0'], {
        error: 'must be on or off (or true/false, 1/0)',
      }),
      'on',
    ),
    z.transform((value) => value === 'on' || value === 'true' || value === '1'),
  );

/**
 * Text where empty means unset (platforms often cannot unset a variable). A function: each
 * variable needs a schema of its own for its note (notes.ts).
 */
export const optionalText = () =>
  z.pipe(
    z.optional(z.string()),
    z.transform((value) => (value === '' ? undefined : value)),
  );

/** Text trimmed, where blank means unset (a URL, an id or secret pasted with a newline). */
export const trimmedText = () =>
  z.pipe(
    z.optional(z.string()),
    z.transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim())),
  );
