import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeStore } from '../../src/db/open.js';

describe('the store as the start-up line names it', () => {
  it.each([
    ['file:./data/gatehouse.db', `sqlite ${path.resolve('data/gatehouse.db')}`],
    ['file:/var/lib/gatehouse/gatehouse.db', 'sqlite /var/lib/gatehouse/gatehouse.db'],
    ['file::memory:', 'sqlite :memory:'],
    ['postgresql://gatehouse:s3cret@db:5432/gatehouse', 'postgresql db:5432/gatehouse'],
    ['postgres://gatehouse:s3cret@db/gatehouse?sslmode=require', 'postgresql db:5432/gatehouse'],
    ['postgres://u:p@[2001:db8::1]:6432/app', 'postgresql [2001:db8::1]:6432/app'],
    [
      'postgres://gatehouse@/gatehouse?host=/run/postgresql',
      'postgresql /run/postgresql:5432/gatehouse',
    ],
    ['postgres://gatehouse:p@db:5432', 'postgresql db:5432/gatehouse'],
    [
      'postgres://u:p#with-hash@db/app',
      'postgresql (host not shown):(port not shown)/(database not shown)',
    ],
  ])('%s → %s', (url, shown) => {
    expect(describeStore(url)).toBe(shown);
    expect(describeStore(url)).not.toMatch(/s3cret|sslmode|with-hash|gatehouse@|u:p/);
  });
});
