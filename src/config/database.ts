import * as z from 'zod/mini';
import { onOff } from './read/kinds.js';
import { noted } from './read/notes.js';

/** Where the data lives: a SQLite file in the data folder, or PostgreSQL. */
export const database = z.pipe(
  z.object({
    DATA_DIR: z._default(z.string().check(z.minLength(1, 'must not be empty')), './data'),
    // Or DATABASE_URL_FILE (src/config/read/secret-files.ts).
    DATABASE_URL: noted(
      z.optional(
        z
          .string()
          .check(
            z.regex(
              /^(file:|postgres:\/\/|postgresql:\/\/)/,
              'must start with postgresql:// or postgres:// (PostgreSQL), or file: (a SQLite file such as file:./data/gatehouse.db)',
            ),
          ),
      ),
      {
        default: '`file:$DATA_DIR/gatehouse.db`',
        example: 'postgresql://gatehouse:password@db:5432/gatehouse',
      },
    ),
    DATABASE_PREPARED: onOff(),
  }),
  z.transform((e) => ({
    /** The SQLite file and the development secret. */
    dataDir: e.DATA_DIR,
    databaseUrl: e.DATABASE_URL ?? `file:${e.DATA_DIR}/gatehouse.db`,
    /**
     * The variable that chose the database, for messages. Only the default file under DATA_DIR
     * gets its folder made: a folder missing for an explicit DATABASE_URL is more likely a typo
     * or an unmounted volume than a wish.
     */
    databaseVariable:
      e.DATABASE_URL === undefined ? ('DATA_DIR' as const) : ('DATABASE_URL' as const),
    /** Named prepared statements on PostgreSQL; off behind PgBouncer in transaction mode. */
    databasePrepared: e.DATABASE_PREPARED,
  })),
);
