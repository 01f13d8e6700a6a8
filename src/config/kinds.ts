import * as z from 'zod/mini';

/** A whole number from `min` to `max`; `fallback` when the variable is unset. */
export const integer = (min: number, max: number, fallback: number) =>
  z._default(z.coerce.number().check(z.int(), z.minimum(min), z.maximum(max)), fallback);

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

/** A switch: `on`/`off`, `true`/`false` or `1`/`0`; `on` when unset. */
export const onOff = () =>
  z.pipe(
    z._default(z.enum(['on', 'off', 'true', 'false', '1', '0']), 'on'),
    z.transform((value) => value === 'on' || value === 'true' || value === '1'),
  );
