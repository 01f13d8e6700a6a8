import type { Readable } from 'node:stream';
import { readImportLine } from './import-line.js';
import type { SourceLine } from './import-users.js';

/** Longest line read: a user with fifty passkeys fits many times over; a line past it is a problem. */
const lineMaxBytes = 1024 * 1024;

/**
 * The lines of a JSON Lines stream as import records or problems, numbered from 1, read as they
 * arrive: memory holds one chunk and one line, whatever the file's size. Blank lines are
 * skipped (and counted); a line past 1 MiB is a problem, its bytes dropped as they come.
 */
export async function* jsonlSource(
  input: Readable,
  importedAt: number,
): AsyncGenerator<SourceLine> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 0;
  let tooLong = false;
  const finish = (): SourceLine | null => {
    line += 1;
    const bytes = Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    if (tooLong) {
      tooLong = false;
      return { line, problem: { field: '(line)', message: 'is longer than 1 MiB' } };
    }
    // A byte-order mark (a file saved by some editors) and Windows line ends are no content.
    const text = bytes
      .toString('utf8')
      .replace(line === 1 ? /^\uFEFF/ : /^$/, '')
      .replace(/\r$/, '');
    if (text.trim() === '') return null;
    return { line, ...readImportLine(text, importedAt) };
  };
  for await (const chunk of input) {
    let data = chunk as Buffer;
    for (let newline = data.indexOf(10); newline !== -1; newline = data.indexOf(10)) {
      if (!tooLong) pending.push(data.subarray(0, newline));
      const item = finish();
      if (item !== null) yield item;
      data = data.subarray(newline + 1);
    }
    if (tooLong) continue;
    pending.push(data);
    pendingBytes += data.length;
    if (pendingBytes > lineMaxBytes) {
      tooLong = true;
      pending = [];
    }
  }
  if (pendingBytes > 0 || tooLong) {
    const item = finish();
    if (item !== null) yield item;
  }
}
