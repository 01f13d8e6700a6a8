import * as z from 'zod/mini';
import { onOff } from './kinds.js';
import { noted } from './notes.js';

/** Where the data lives: a SQLite file in the data folder, or PostgreSQL. */
export const database = z.pipe(
  z.object({
    DATA_DIR: z._default(z.string().check(z.minLength(1)), './data'),
    // Or DATABASE_URL_FILE (src/config/secret-files.ts).
    DATABASE_URL: noted(
      z.optional(
        z
          .string()
          .check(
            z.regex(
              /^(file:|postgres:\/\/|postgresql:\/\/)/,
              'must start with file: or postgres://',
            ),
          ),
      ),
      {
        default: '`file:$DATA_DIR/gatehouse.db`',
        example: 'postgres://gatehouse:password@db:5432/gatehouse',
      },
    ),
    DATABASE_PREPARED: onOff(),
  }),
  z.transform((e) => ({
    /** The SQLite file and the development secret. */
    dataDir: e.DATA_DIR,
    databaseUrl: e.DATABASE_URL ?? `file:${e.DATA_DIR}/gatehouse.db`,
    /** Named prepared statements on PostgreSQL; off behind PgBouncer in transaction mode. */
    databasePrepared: e.DATABASE_PREPARED,
  })),
);
