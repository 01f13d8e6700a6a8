import { describe, expect, it } from 'vitest';
import {
  readCounter,
  readFlag,
  readInstant,
  readKey,
  readTransports,
} from '../../src/operator/import/authjs-values.js';

/*
 * An Auth.js adapter's column values as each engine and adapter version stores them
 * (adoption spec §3): what each reads as, and the words for what cannot be read.
 */

const at = Date.UTC(2024, 0, 2, 3, 4, 5, 678);

describe('a date column', () => {
  it.each([
    ['no date', null, null],
    ['epoch milliseconds (Prisma and Drizzle on SQLite)', at, at],
    ['epoch milliseconds as a bigint', BigInt(at), at],
    ['epoch milliseconds as digits (a PostgreSQL bigint)', String(at), at],
    ['ISO with Z (the Kysely adapter on SQLite)', '2024-01-02T03:04:05.678Z', at],
    ['ISO with an offset (Prisma through a driver adapter)', '2024-01-02T03:04:05.678+00:00', at],
    ['PostgreSQL timestamp, no zone: UTC', '2024-01-02 03:04:05.678', at],
    ['PostgreSQL timestamptz, hour offset', '2024-01-02 03:04:05.678+00', at],
    ['an offset east of UTC', '2024-01-02 08:34:05.678+05:30', at],
    ['an offset without a colon', '2024-01-02T01:04:05.678-0200', at],
    ['microseconds', '2024-01-02 03:04:05.678901', at],
    ["SQLite's CURRENT_TIMESTAMP", '2024-01-02 03:04:05', at - 678],
    ['a date alone', '2024-01-02', Date.UTC(2024, 0, 2)],
  ])('%s reads as epoch milliseconds', (_, value, expected) => {
    expect(readInstant(value)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['seconds', 1704164645, '1704164645 is before 1973 as epoch milliseconds (stored in seconds?)'],
    ['a fraction', 1.5e12 + 0.5, '1500000000000.5 is not a date (epoch milliseconds)'],
    ['a negative number', -1, '-1 is not a date (epoch milliseconds)'],
    ['words', 'yesterday', '"yesterday" is not a date'],
    ["PostgreSQL's infinity", 'infinity', '"infinity" is not a date'],
    ['a month that is none', '2024-13-02 03:04:05', '"2024-13-02 03:04:05" is not a date'],
    ['a boolean', true, 'is not a date'],
  ])('%s is refused', (_, value, reason) => {
    expect(readInstant(value)).toEqual({ ok: false, reason });
  });
});

describe('a credential id or public key', () => {
  it.each([
    ['base64 with padding, as Auth.js writes it', '+/+/AQ==', '-_-_AQ'],
    ['base64 without padding', '+/+/AQ', '-_-_AQ'],
    ['base64url', '-_-_AQ', '-_-_AQ'],
    ['a whole quantum', 'AQID', 'AQID'],
  ])('%s reads as base64url without padding', (_, value, expected) => {
    expect(readKey(value)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['empty', '', 'is not base64 or base64url'],
    ['null', null, 'is empty'],
    ['bytes', Buffer.from('AQID'), 'is not text'],
    ['a character of neither alphabet', 'AQ*D', 'is not base64 or base64url'],
    ['a space', 'AQ ID', 'is not base64 or base64url'],
    ['one character too many', 'AQIDB', 'is not base64 or base64url'],
    ['padding where none fits', 'AQID=', 'is not base64 or base64url'],
    ['bits left over', 'AR', 'is not base64 or base64url (bits left over)'],
  ])('%s is refused', (_, value, reason) => {
    expect(readKey(value)).toEqual({ ok: false, reason });
  });
});

describe("an authenticator's other columns", () => {
  it.each([
    [null, 0],
    [7, 7],
    ['42', 42],
    [4294967295, 4294967295],
  ])('counter %s reads as %s', (value, expected) => {
    expect(readCounter(value)).toEqual({ ok: true, value: expected });
  });

  it.each([
    [-1, '-1 is not a signature counter (0 to 4294967295)'],
    [4294967296, '4294967296 is not a signature counter (0 to 4294967295)'],
    [1.5, '1.5 is not a signature counter (0 to 4294967295)'],
    ['seven', 'seven is not a signature counter (0 to 4294967295)'],
  ])('counter %s is refused', (value, reason) => {
    expect(readCounter(value)).toEqual({ ok: false, reason });
  });

  it.each([
    [true, true],
    [false, false],
    [1, true],
    [0, false],
    ['TRUE', true],
    ['f', false],
    [null, false],
  ])('backed-up flag %s reads as %s', (value, expected) => {
    expect(readFlag(value)).toEqual({ ok: true, value: expected });
  });

  it('a backed-up flag of 2 is refused', () => {
    expect(readFlag(2)).toEqual({ ok: false, reason: '2 is not true or false' });
  });

  it.each([
    [null, []],
    ['', []],
    ['internal', ['internal']],
    ['internal,hybrid', ['internal', 'hybrid']],
    [' usb , nfc ,', ['usb', 'nfc']],
  ])('transports %j read as %j', (value, expected) => {
    expect(readTransports(value)).toEqual({ ok: true, value: expected });
  });
});
