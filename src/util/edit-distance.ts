/**
 * Edits from `a` to `b`: insertions, deletions, substitutions and swaps of two neighbours
 * (optimal string alignment). Used for "did you mean" by the CLI and the start-up warnings.
 */
export function editDistance(a: string, b: string): number {
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
 * `editDistance(a, b)` when it is at most `limit`, else `limit + 1`: only the cells within
 * `limit` of the diagonal are worked out, and a row with none within the limit ends it (no path
 * through it comes back under: a swap reaches over a row only from one a step cheaper, whose
 * neighbour in that row is then within). The start-up warnings compare every variable of the
 * environment with every name Gatehouse reads: the whole table took 6.5 ms of CPU a start in a
 * profile (39 variables), and this takes 2.5 ms off the median start (`npm run bench:startup`).
 */
export function editsWithin(a: string, b: string, limit: number): number {
  const over = limit + 1;
  if (Math.abs(a.length - b.length) > limit) return over;
  const width = b.length + 1;
  let before = new Array<number>(width).fill(over);
  let above = Array.from({ length: width }, (_, j) => (j <= limit ? j : over));
  for (let i = 1; i <= a.length; i += 1) {
    const row = new Array<number>(width).fill(over);
    if (i <= limit) row[0] = i;
    let least = row[0] as number;
    for (let j = Math.max(1, i - limit); j <= Math.min(b.length, i + limit); j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (before[j - 2] as number) + 1);
      }
      row[j] = Math.min(best, over);
      least = Math.min(least, row[j] as number);
    }
    if (least > limit) return over;
    before = above;
    above = row;
  }
  return Math.min(above[b.length] as number, over);
}
