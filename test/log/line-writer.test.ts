import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LineWriter } from '../../src/log/line-writer.js';

const dirs: string[] = [];
function openLog() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-line-writer-'));
  dirs.push(dir);
  const file = path.join(dir, 'out.log');
  return { file, fd: fs.openSync(file, 'a'), read: () => fs.readFileSync(file, 'utf8') };
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the log line writer', () => {
  // The linger's clock is faked (a loaded machine may stall a real one past any margin); the
  // writes are real, and flush() waits for one already under way without starting another.
  it('holds a line for the linger, then writes it without a flush', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const log = openLog();
    const writes = vi.spyOn(fs, 'write');
    const writer = new LineWriter({ fd: log.fd, lingerMs: 200 });
    writer.write('one\n');
    // Several turns of the loop later, and just short of the linger: still held.
    for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    vi.advanceTimersByTime(199);
    expect(writes).not.toHaveBeenCalled();
    expect(log.read()).toBe('');
    vi.advanceTimersByTime(1);
    expect(writes).toHaveBeenCalledTimes(1);
    await writer.flush();
    expect(writes).toHaveBeenCalledTimes(1);
    expect(log.read()).toBe('one\n');
  });

  it('makes one write of lines written over many turns within the linger', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const log = openLog();
    const writes = vi.spyOn(fs, 'write');
    const writer = new LineWriter({ fd: log.fd, lingerMs: 200 });
    for (let turn = 0; turn < 20; turn += 1) {
      writer.write(`line ${turn}\n`);
      await new Promise((resolve) => setImmediate(resolve));
      vi.advanceTimersByTime(5);
    }
    expect(writes).not.toHaveBeenCalled();
    vi.advanceTimersByTime(200);
    await writer.flush();
    expect(writes).toHaveBeenCalledTimes(1);
    expect(log.read().split('\n')).toHaveLength(21);
  });

  it('sends many lines in few writes, every line whole and in order', async () => {
    const log = openLog();
    const writes = vi.spyOn(fs, 'write');
    const writer = new LineWriter({ fd: log.fd, lingerMs: 20 });
    const lines = Array.from(
      { length: 2000 },
      (_, i) => `{"n":${i},"pad":"${'x'.repeat(i % 50)}"}\n`,
    );
    for (const line of lines) writer.write(line);
    await writer.flush();
    expect(log.read()).toBe(lines.join(''));
    // 2,000 lines of about 40-90 bytes: a handful of writes of up to 16 KB, not one per line.
    expect(writes.mock.calls.length).toBeLessThan(20);
  });

  it('flush() sends what waits for its linger at once and resolves once it is written', async () => {
    const log = openLog();
    const writer = new LineWriter({ fd: log.fd, lingerMs: 60_000 });
    writer.write('held\n');
    await writer.flush();
    expect(log.read()).toBe('held\n');
    // Lines written while a write is under way are in the file when a later flush resolves.
    writer.write('a\n');
    const first = writer.flush();
    writer.write('b\n');
    await Promise.all([first, writer.flush()]);
    expect(log.read()).toBe('held\na\nb\n');
  });

  it('flushSync() writes what is held, for the exit handler', () => {
    const log = openLog();
    const writer = new LineWriter({ fd: log.fd, lingerMs: 60_000 });
    writer.write('last words\n');
    writer.flushSync();
    expect(log.read()).toBe('last words\n');
  });

  it('drops and counts lines past what it may hold, instead of growing without bound', async () => {
    const log = openLog();
    const writer = new LineWriter({ fd: log.fd, lingerMs: 60_000, heldBytesMax: 10 });
    writer.write('12345\n');
    writer.write('67890\n');
    expect(writer.dropped).toBe(1);
    await writer.flush();
    expect(log.read()).toBe('12345\n');
  });
});
