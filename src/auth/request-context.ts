import { AsyncLocalStorage } from 'node:async_hooks';

/** Why a request that went through Auth.js must be answered by us instead. */
export type Interruption =
  | { kind: 'throttled'; retryAfterSeconds: number }
  | { kind: 'overloaded' }
  | { kind: 'unavailable'; error: unknown }
  | { kind: 'internal'; error: unknown };

/**
 * What Auth.js cannot carry between our route and our callbacks: Auth.js hands `authorize()`
 * a rebuilt Request, so the client address and the outcome travel in AsyncLocalStorage.
 */
export interface AuthRequestContext {
  clientIp: string;
  /** The session token the client held when it signed in again (fixation: it is revoked). */
  previousSessionToken: string | undefined;
  interruption?: Interruption;
}

export const authContext = new AsyncLocalStorage<AuthRequestContext>();

/** Records why the request failed; the first cause wins. */
export function interrupt(interruption: Interruption): void {
  const context = authContext.getStore();
  if (context !== undefined && context.interruption === undefined) {
    context.interruption = interruption;
  }
}

/** Marks a store failure so the route answers 503 rather than a quiet "no session". */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the database did not answer', { cause });
    this.name = 'StoreUnavailableError';
  }
}

export async function fromStore<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    interrupt({ kind: 'unavailable', error });
    throw new StoreUnavailableError(error);
  }
}
