import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailCatalogue } from '../../mail/catalogue.js';
import type { AccountEventType } from './events.js';

/** One thing a reset removed, as the owner's events record it. */
export interface FactorRemoved {
  type: AccountEventType;
  detail: Record<string, unknown>;
}

/**
 * What a way in contributes beyond its wiring, declared in its own folder and listed once in
 * `upkeep-registry.ts`: the mails it sends with their words, what an operator's "reset the second
 * factor" removes of it, and the prune of what it keeps.
 */
export interface MethodUpkeep {
  /** The way in, as an operator names it (`--passkeys`). */
  id: string;
  mails?: MailCatalogue;
  reset?: {
    /** Part of a reset only when the operator names the way in; otherwise of every reset. */
    onlyWhenNamed: boolean;
    /**
     * Removes the way in's factor of `userId` in the operator's transaction (after lockFactors),
     * each removal with its webhook; what it removed, none when there was nothing.
     */
    remove(trx: Kysely<Database>, userId: string, now: number): Promise<readonly FactorRemoved[]>;
  };
  /** Deletes what it keeps past its time (the wing's periodic prune). */
  prune?: (db: Kysely<Database>, now: number) => Promise<unknown>;
}
