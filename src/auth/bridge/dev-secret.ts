import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const warnOnStderr = (message: string) => {
  process.stderr.write(`gatehouse: warning: ${message}\n`);
};

/**
 * An existing secret file is trusted only if nobody else could have written it: a file that
 * group or others may write, or that another user owns, could have been planted to sign
 * sessions with a key its planter knows. One that others may read is only a warning.
 */
function checkExisting(file: string, stat: fs.Stats, warn: (message: string) => void): void {
  const mode = stat.mode & 0o777;
  const octal = `0${mode.toString(8)}`;
  const replace = `remove it (a new one is made) or set AUTH_SECRET`;
  if (!stat.isFile())
    throw new Error(`development secret ${file} is not a regular file; refused: ${replace}`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    throw new Error(
      `development secret ${file} is owned by uid ${stat.uid}, not by this user (uid ${uid}): it could have been planted; refused: ${replace}`,
    );
  if ((mode & 0o022) !== 0)
    throw new Error(
      `development secret ${file} is writable by group or others (mode ${octal}): it could have been planted; refused: ${replace}`,
    );
  if ((mode & 0o044) !== 0)
    warn(
      `development secret ${file} is readable by group or others (mode ${octal}); fix: chmod 600 ${file}`,
    );
}

const asUser = () => {
  const uid = process.getuid?.();
  return uid === undefined ? 'this user' : `this user (uid ${uid})`;
};

/** A file-system refusal, named by the variable to change; anything else as it came. */
function explained(error: unknown, reading: boolean, file: string, dataDir: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'EACCES' || code === 'EPERM'
      ? 'permission denied'
      : code === 'EROFS'
        ? 'read-only file system'
        : code === 'ENOSPC'
          ? 'no space left on the device'
          : undefined;
  if (why === undefined) return error;
  return new Error(
    reading
      ? `DATA_DIR: cannot read the development secret ${file} (${why}); make it readable by ${asUser()}, or set AUTH_SECRET (or AUTH_SECRET_FILE)`
      : `DATA_DIR: cannot write the development secret in ${dataDir} (${why}); make DATA_DIR writable by ${asUser()}, or set AUTH_SECRET (or AUTH_SECRET_FILE)`,
  );
}

/**
 * Development only: a random AUTH_SECRET made once and kept in the data folder (mode 0600),
 * so sessions survive restarts without anyone pasting a secret. An existing file that could
 * have been planted is refused (throws); one that others may read is warned about.
 */
export function loadOrCreateDevSecret(
  dataDir: string,
  warn: (message: string) => void = warnOnStderr,
): { secret: string; created: boolean } {
  const file = path.join(dataDir, 'auth-secret');
  let fd: number | undefined;
  try {
    // O_NOFOLLOW: a symbolic link planted in its place is refused (ELOOP), not followed.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP')
      throw new Error(
        `development secret ${file} is a symbolic link; refused: remove it (a new one is made) or set AUTH_SECRET`,
      );
    if (code !== 'ENOENT') throw explained(error, true, file, dataDir);
  }
  if (fd !== undefined) {
    try {
      checkExisting(file, fs.fstatSync(fd), warn);
      let existing: string;
      try {
        existing = fs.readFileSync(fd, 'utf8').trim();
      } catch (error) {
        throw explained(error, true, file, dataDir);
      }
      if (existing.length >= 32) return { secret: existing, created: false };
    } finally {
      fs.closeSync(fd);
    }
  }
  const secret = randomBytes(33).toString('base64');
  try {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  } catch (error) {
    throw explained(error, false, file, dataDir);
  }
  return { secret, created: true };
}
