/**
 * Most combining marks allowed in a row in a typed email or password: the bound of UAX #15's
 * Stream-Safe Text Format, which no written language comes near. NFKC sorts each run of marks
 * by insertion (canonical reordering), so its cost grows with the square of a run's length:
 * one run of 4,095 marks held the event loop for milliseconds. Runs of at most 30 keep the
 * cost linear in the length, which the length limits then bound.
 */
export const markRunMax = 30;

// Every character NFKC may reorder (canonical combining class above 0) is a mark (\p{M}), but
// for the half-width kana sound marks U+FF9E and U+FF9F, which NFKC turns into combining ones
// (checked over every code point). Spacing marks count too: a loose bound, not a Unicode table.
const mark = '[\\p{M}\\uFF9E\\uFF9F]';
// The look-behind starts a match only where a run starts: without it, each mark of a run of 30
// would start a scan of its own, quadratic again (0.9 ms over 4,096 units).
const longRun = new RegExp(`(?<!${mark})${mark}{${markRunMax + 1}}`, 'u');

/** Whether `text` holds more than `markRunMax` marks in a row (code points, not UTF-16 units). */
export function hasLongMarkRun(text: string): boolean {
  return longRun.test(text);
}
