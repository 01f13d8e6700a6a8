/*
 * The values of an Auth.js adapter's columns as each engine and adapter version stores them,
 * read into an import record's: a reason in words when a value cannot be read.
 */

export type Read<T> = { ok: true; value: T } | { ok: false; reason: string };

const ok = <T>(value: T): Read<T> => ({ ok: true, value });
const bad = <T>(reason: string): Read<T> => ({ ok: false, reason });

// Epoch milliseconds below this are before March 1973: no Auth.js app proved an address then,
// so such a number is most likely a count of seconds (Drizzle's `timestamp` mode rather than its
// default `timestamp_ms`), which read as milliseconds would import a date in January 1970.
const earliestEpochMs = 1e11;
// ECMAScript's last representable date.
const latestEpochMs = 8.64e15;

function fromEpochMs(ms: number, shown: string): Read<number> {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > latestEpochMs)
    return bad(`${shown} is not a date (epoch milliseconds)`);
  if (ms < earliestEpochMs)
    return bad(`${shown} is before 1973 as epoch milliseconds (stored in seconds?)`);
  return ok(ms);
}

// ISO 8601 as JavaScript's toISOString writes it (the Kysely adapter on SQLite, Prisma's driver
// adapters), PostgreSQL's ISO output with its `+00` offset, SQLite's `YYYY-MM-DD HH:MM:SS`.
const dateText =
  /^(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2})(:\d{2})?(\.\d+)?)? ?([Zz]|[+-]\d{2}(?::?\d{2})?)?$/;

/** `Z`, `+05`, `+0530` or `+05:30` as ISO 8601 writes an offset. */
function isoOffset(zone: string): string {
  if (zone.toUpperCase() === 'Z') return 'Z';
  const digits = zone.slice(1).replace(':', '');
  return `${zone.slice(0, 1)}${digits.slice(0, 2)}:${digits.slice(2).padEnd(2, '0')}`;
}

function fromDateText(text: string): Read<number> {
  const match = dateText.exec(text);
  if (match === null) return bad(`"${text}" is not a date`);
  // No zone: UTC, as Prisma and Drizzle write a `timestamp` column and SQLite its own clock.
  const [, day, minute = '00:00', second = ':00', fraction = '', zone = 'Z'] = match;
  const millis = fraction.slice(1, 4).padEnd(3, '0');
  const ms = Date.parse(`${day}T${minute}${second}.${millis}${isoOffset(zone)}`);
  return Number.isNaN(ms) ? bad(`"${text}" is not a date`) : fromEpochMs(ms, `"${text}"`);
}

/**
 * A date column (`emailVerified`, `createdAt`) as epoch milliseconds, null when empty: Prisma on
 * SQLite writes epoch milliseconds or ISO text depending on its version, Drizzle on SQLite epoch
 * milliseconds, the Kysely adapter on SQLite ISO text, PostgreSQL (read as text) its ISO form.
 */
export function readInstant(value: unknown): Read<number | null> {
  if (value === null || value === undefined) return ok(null);
  if (value instanceof Date) return fromEpochMs(value.getTime(), value.toISOString());
  if (typeof value === 'number' || typeof value === 'bigint')
    return fromEpochMs(Number(value), String(value));
  if (typeof value !== 'string') return bad('is not a date');
  if (/^\d+$/.test(value)) return fromEpochMs(Number(value), value);
  return fromDateText(value.trim());
}

/**
 * A credential id or public key as base64url without padding. Auth.js writes both as base64
 * (`toBase64`, with `+`, `/` and padding), other versions and apps base64url: either is taken,
 * and must decode exactly (no stray characters, no bits left over).
 */
export function readKey(value: unknown): Read<string> {
  if (typeof value !== 'string') return bad(value === null ? 'is empty' : 'is not text');
  const unpadded = value.replace(/={1,2}$/, '');
  const padded = unpadded.length !== value.length;
  if (
    unpadded.length === 0 ||
    !/^[A-Za-z0-9+/_-]+$/.test(unpadded) ||
    unpadded.length % 4 === 1 ||
    (padded && value.length % 4 !== 0)
  )
    return bad('is not base64 or base64url');
  const url = unpadded.replaceAll('+', '-').replaceAll('/', '_');
  if (Buffer.from(url, 'base64url').toString('base64url') !== url)
    return bad('is not base64 or base64url (bits left over)');
  return ok(url);
}

// A WebAuthn signature counter is an unsigned 32-bit number (WebAuthn §6.1, signCount).
const counterMax = 2 ** 32 - 1;

/** The signature counter; 0 when none was kept. */
export function readCounter(value: unknown): Read<number> {
  if (value === null || value === undefined) return ok(0);
  const counter =
    typeof value === 'number' || typeof value === 'bigint'
      ? Number(value)
      : typeof value === 'string' && /^\d+$/.test(value)
        ? Number(value)
        : Number.NaN;
  return Number.isInteger(counter) && counter >= 0 && counter <= counterMax
    ? ok(counter)
    : bad(`${String(value)} is not a signature counter (0 to ${counterMax})`);
}

const flags = new Map<unknown, boolean>([
  [true, true],
  [false, false],
  [1, true],
  [0, false],
  [1n, true],
  [0n, false],
  ['1', true],
  ['0', false],
  ['true', true],
  ['false', false],
  ['t', true],
  ['f', false],
]);

/** A boolean as PostgreSQL (`true`), SQLite (`1`, Prisma's and Drizzle's) or as text stores it. */
export function readFlag(value: unknown): Read<boolean> {
  if (value === null || value === undefined) return ok(false);
  const flag = flags.get(typeof value === 'string' ? value.toLowerCase() : value);
  return flag === undefined ? bad(`${String(value)} is not true or false`) : ok(flag);
}

/** Auth.js's `transports`: the hints joined by commas (`transportsToString`); none when empty. */
export function readTransports(value: unknown): Read<string[]> {
  if (value === null || value === undefined) return ok([]);
  if (typeof value !== 'string') return bad('is not text');
  return ok(
    value
      .split(',')
      .map((transport) => transport.trim())
      .filter((transport) => transport !== ''),
  );
}

/** A text column, also when SQLite holds a number in it; null when empty or not text. */
export function readText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return null;
}
