/** Words people reach for that name a command under another name (`delete` is `remove`). */
const synonyms: Record<string, string> = {
  create: 'add',
  new: 'add',
  ls: 'list',
  show: 'list',
  delete: 'remove',
  del: 'remove',
  rm: 'remove',
  passwd: 'set-password',
  password: 'set-password',
  revoke: 'revoke-sessions',
  logout: 'revoke-sessions',
  lock: 'disable',
  block: 'disable',
  unblock: 'enable',
};

/** Edits from `a` to `b`: insertions, deletions, substitutions and swaps of two neighbours. */
function distance(a: string, b: string): number {
  const rows = [Array.from({ length: b.length + 1 }, (_, index) => index)];
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const above = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = best;
    }
    rows.push(row);
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/**
 * The known name closest to `typed` (a synonym, or at most two edits and a third of its length
 * away), or null. Callers show only the suggestion, never `typed`: it might be a password.
 */
export function closest(typed: string, known: readonly string[]): string | null {
  const word = typed.toLowerCase();
  const synonym = synonyms[word];
  if (synonym !== undefined && known.includes(synonym)) return synonym;
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const name of known) {
    const d = distance(word, name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  const limit = Math.min(2, Math.max(1, Math.floor(word.length / 3)));
  return bestDistance <= limit ? best : null;
}
