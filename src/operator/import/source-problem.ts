/*
 * A row of another service's database that cannot become part of an import record (adoption spec
 * §3): reported by table, row and field, never dropped in silence and never thrown.
 */

export interface SourceProblem {
  kind: 'problem';
  /** The table as the source names it (`User`, `account`, the password column's table). */
  table: string;
  /**
   * The row's key as its table keys it: a user's id; an account's
   * `provider=…, providerAccountId=…`; an authenticator's credentialID; a password row's user id.
   */
  rowId: string;
  /** The column whose value is the problem. */
  field: string;
  /** Why, in words for the operator; never a password hash or a key. */
  reason: string;
  /**
   * The user the row belongs to, when it names one: that user is left out (no record carries a
   * user with part of its rows missing).
   */
  userId: string | null;
}

/** Whether an item a source yields is a problem rather than a record. */
export function isSourceProblem<T extends object>(item: T | SourceProblem): item is SourceProblem {
  return 'kind' in item && item.kind === 'problem';
}

/** One line for the operator: `table "User", row "u3": email "x" is not one mailbox address`. */
export function describeSourceProblem(problem: SourceProblem): string {
  return `table "${problem.table}", row "${problem.rowId}": ${problem.field} ${problem.reason}`;
}
