import type { Readable } from 'node:stream';
import { HttpError } from '../http/errors.js';
import { importUsers } from '../operator/import/import-users.js';
import { jsonlSource } from '../operator/import/jsonl-source.js';
import { ok, type AdminHandler } from './admin-call.js';

/** The media types an import's body may have: JSON Lines. */
export const importMediaTypes = ['application/x-ndjson', 'application/jsonl'];

/**
 * `POST /api/admin/users/import` (`?check=true`: report only), a JSON Lines body as
 * `gatehouse users import` reads a file, streamed: 200 with the report when imported (or, with
 * check, when it would be), 422 `import_refused` with the report, nothing written, when a line
 * has a problem.
 */
export const importUsersRoute: AdminHandler = async (call) => {
  const body = call.stream;
  if (body === undefined)
    throw new HttpError(
      'unsupported_media_type',
      {},
      'Send the users as JSON Lines: Content-Type: application/x-ndjson.',
    );
  const checkParam = call.query.check;
  if (checkParam !== undefined && checkParam !== 'true' && checkParam !== 'false')
    throw new HttpError('invalid_field', {}, 'check must be true or false.', { field: 'check' });
  const check = checkParam === 'true';
  const { ports } = call;
  const report = await importUsers(ports, jsonlSource(body as Readable, ports.now()), {
    check,
    actor: call.actor,
    firebase: ports.firebaseScrypt ?? null,
    issuerOf: (provider) => ports.issuerOf?.(provider) ?? null,
  });
  if (report.problems.length > 0 || report.moreProblems > 0)
    return ok(
      {
        error: {
          code: 'import_refused',
          message: `Nothing was written: line ${report.problems[0]?.line ?? '?'} has a problem (every one is listed in problems).`,
        },
        ...report,
      },
      422,
    );
  return ok(report);
};
