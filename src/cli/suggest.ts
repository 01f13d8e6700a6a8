import { editDistance as distance } from '../util/edit-distance.js';

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
