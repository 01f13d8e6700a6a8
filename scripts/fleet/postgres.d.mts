// Types for postgres.mjs.
export interface Postgres {
  /** postgres:// URL of the `gatehouse` database. */
  readonly url: string;
  readonly port: number;
  readonly pid: number | undefined;
  /** Fast shutdown; resolves once the postmaster has exited. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data; resolves once it answers. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export function postgresBinDir(): string | undefined;
export function startPostgres(dir: string): Promise<Postgres>;
