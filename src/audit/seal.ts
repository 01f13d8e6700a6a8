import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/*
 * The seal: an HMAC-SHA-256, under AUDIT_KEY, of the chain's head (seq, hash) and checkpoint
 * (pruned seq and hash), kept in the head row. The key is never in the database, so someone who
 * can write the database but not read the service's environment cannot move the head or the
 * checkpoint without the seal showing it. Each append and prune batch that finds the seal whole
 * seals the new head; one that finds it broken (or no key in this process) leaves it as it is,
 * so a broken seal stays broken until an operator seals the chain again (`gatehouse audit seal`),
 * and nothing the database holds can make it whole.
 */

interface SealKey {
  id: string;
  key: Buffer;
}

const version = 'v1';

function keyOf(secret: string): SealKey {
  const key = Buffer.from(hkdfSync('sha256', secret, '', 'gatehouse audit seal v1', 32));
  const id = createHash('sha256').update(key).digest('base64url').slice(0, 8);
  return { id, key };
}

let ring: readonly SealKey[] = [];

/**
 * This process's AUDIT_KEY keys, current first, set once at start (the service and the CLI):
 * appends and prunes keep the seal with them, verify checks it. Empty: no key here.
 */
export function sealAuditWith(secrets: readonly string[]): void {
  ring = secrets.map(keyOf);
}

/** Whether this process has an AUDIT_KEY to seal with. */
export const canSealAudit = (): boolean => ring.length > 0;

/** The head row's columns a seal covers or is. Numbers may come as text from PostgreSQL. */
export interface HeadColumns {
  seq: number | string;
  hash: string;
  pruned_seq: number | string;
  pruned_hash: string;
  seal: string | null;
  sealed_since: number | string | null;
}

function macOf(key: SealKey, head: HeadColumns, sealedSince: number): string {
  const covered = JSON.stringify([
    'gatehouse audit head',
    version,
    Number(head.seq),
    head.hash,
    Number(head.pruned_seq),
    head.pruned_hash,
    sealedSince,
  ]);
  return createHmac('sha256', key.key).update(covered).digest('base64url');
}

/** The seal of `head` under the current key, started at `sealedSince`. */
export function sealOf(head: HeadColumns, sealedSince: number): string {
  const current = ring[0];
  if (current === undefined) throw new Error('no AUDIT_KEY to seal the audit head with');
  return [version, current.id, macOf(current, head, sealedSince)].join('.');
}

/**
 * What the head's seal says here: `off` (no key here, none in the database), `unchecked` (sealed,
 * but no key here to check it), `valid`, `missing` (a key here, no seal: never sealed, or the
 * seal was removed) or `broken` (it does not match the head and checkpoint: they were moved by
 * something without the key, or sealed under a key not listed here).
 */
export type SealState = 'off' | 'unchecked' | 'valid' | 'missing' | 'broken';

export function sealState(head: HeadColumns): SealState {
  if (ring.length === 0) return head.seal === null ? 'off' : 'unchecked';
  if (head.seal === null || head.sealed_since === null) return 'missing';
  const [v, id, mac] = head.seal.split('.');
  const key = ring.find((candidate) => candidate.id === id);
  if (v !== version || key === undefined || mac === undefined) return 'broken';
  const expected = Buffer.from(macOf(key, head, Number(head.sealed_since)));
  const given = Buffer.from(mac);
  return given.length === expected.length && timingSafeEqual(given, expected) ? 'valid' : 'broken';
}

/**
 * The seal to write when the head moves from `before` to `after` (an append, a prune batch):
 * a new one when `before` was whole under a key here, else none (the column is left as it is).
 */
export function nextSeal(
  before: HeadColumns,
  after: Omit<HeadColumns, 'seal' | 'sealed_since'>,
): { seal: string } | undefined {
  if (sealState(before) !== 'valid') return undefined;
  const since = Number(before.sealed_since);
  return { seal: sealOf({ ...after, seal: null, sealed_since: since }, since) };
}
