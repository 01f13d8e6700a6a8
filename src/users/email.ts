export const emailMaxLength = 254;

/** Trim, Unicode NFKC, lower-case: one account however the address is typed. */
export function normaliseEmail(raw: string): string {
  return raw.trim().normalize('NFKC').toLowerCase();
}

// Deliberately loose: the store compares normalised strings; this only rejects what cannot be an address.
// A NUL byte is refused outright: PostgreSQL cannot store one and C code would cut the string.
const emailShape = /^[^\s@]+@[^\s@]+$/u;

export function isPlausibleEmail(normalised: string): boolean {
  return (
    normalised.length <= emailMaxLength && !normalised.includes('\0') && emailShape.test(normalised)
  );
}
