/** Longest password accepted, in code points, at sign-in and when set. */
export const passwordMaxLength = 1024;

/** NIST 800-63B: normalise (NFKC), never truncate, no composition rules. */
export function normalisePassword(raw: string): string {
  return raw.normalize('NFKC');
}

export function codePointLength(text: string): number {
  // UTF-16 length minus the second half of each surrogate pair, without copying the string.
  let count = text.length;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xdc00 && unit <= 0xdfff) count -= 1;
  }
  return count;
}
