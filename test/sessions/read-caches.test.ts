import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCache, readCaches, type ReadCacheName } from '../../src/sessions/caches.js';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const at = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(at) : at.endsWith('.ts') ? [at] : [];
  });
}

const rows = Object.entries(readCaches) as [ReadCacheName, (typeof readCaches)[ReadCacheName]][];

describe("one index of the session read's caches", () => {
  it.each(rows)('%s says what it keeps, its bound and what drops it', (_name, row) => {
    expect(row.keeps.length).toBeGreaterThan(20);
    expect(row.dropped.length).toBeGreaterThan(10);
    expect(row.entries).toBeGreaterThan(0);
  });

  it.each(rows)('%s is built in its file from its row', (name, row) => {
    const source = fs.readFileSync(row.file, 'utf8');
    const built = source.includes(`readCache<`) && source.includes(`'${name}'`);
    const bounded = source.includes(`readCaches.${name}.`);
    // A WeakMap on the socket is bounded by the open connections: its function bears the name.
    const named = source.includes(`function ${name}(`);
    expect(built || bounded || named).toBe(true);
  });

  it("no cache on the read's path is built beside the index", () => {
    const builders = sourceFiles('src')
      .filter((file) => fs.readFileSync(file, 'utf8').includes('new RecentCache'))
      .map((file) => file.split(path.sep).join('/'))
      .sort();
    // Kysely's prepared statements (db/sqlite.ts) and the request budget's address groups
    // (front door, every request) are not the session read's: they are bounded where they are.
    expect(builders).toEqual([
      'src/db/sqlite.ts',
      'src/http/request-budget-door.ts',
      'src/sessions/caches.ts',
    ]);
  });

  it('a cache built from its row holds at most its entries and bytes', () => {
    const cache = readCache<string, string>(
      'hostOrigins',
      (key, value) => key.length + value.length,
    );
    const { entries, bytes, entryOverheadBytes } = readCaches.hostOrigins;
    for (let i = 0; i < entries + 10; i += 1) cache.set(`host-${i}`, 'x');
    expect(cache.get('host-0')).toBeUndefined();
    expect(cache.get(`host-${entries + 9}`)).toBe('x');
    // One entry heavier than the whole budget is not kept.
    cache.set('heavy', 'x'.repeat(bytes - entryOverheadBytes));
    expect(cache.get('heavy')).toBeUndefined();
  });
});
