import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Development only: a random AUTH_SECRET made once and kept in the data folder (mode 0600),
 * so sessions survive restarts without anyone pasting a secret.
 */
export function loadOrCreateDevSecret(dataDir: string): { secret: string; created: boolean } {
  const file = path.join(dataDir, 'auth-secret');
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return { secret: existing, created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(33).toString('base64');
  fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return { secret, created: true };
}
