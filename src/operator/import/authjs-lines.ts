import type { ImportRecord } from './import-record.js';
import { readImportLine } from './import-line.js';
import type { SourceLine } from './import-users.js';
import { isSourceProblem, type SourceProblem } from './source-problem.js';

/**
 * An Auth.js database's records and problems (authjs-database.ts) as the import's lines,
 * numbered as read: each record held to the checks a file's line is held to (its id's form, a
 * name's length, a provider's id), each problem naming its table, row and field.
 */
export async function* authjsLines(
  source: AsyncIterable<ImportRecord | SourceProblem>,
): AsyncGenerator<SourceLine> {
  let line = 0;
  for await (const item of source) {
    line += 1;
    if (isSourceProblem(item)) {
      yield {
        line,
        problem: { field: `${item.table}(${item.rowId}).${item.field}`, message: item.reason },
      };
      continue;
    }
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    const read = readImportLine(
      JSON.stringify({
        ...item,
        emailVerifiedAt: undefined,
        emailVerified: iso(item.emailVerifiedAt),
        createdAt: iso(item.createdAt),
      }),
      Date.now(),
    );
    yield 'record' in read
      ? { line, record: read.record }
      : {
          line,
          problem: {
            field: `user(${item.id}).${read.problem.field}`,
            message: read.problem.message,
          },
        };
  }
}
