import { createHash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';

/** An admin token as kept in memory: its line's label and the SHA-256 of the token. */
interface KeptToken {
  label: string;
  digest: Buffer;
}

/** Shortest token taken: 32 characters (e.g. `openssl rand -hex 16`) cannot be guessed online. */
export const adminTokenMinLength = 32;
const labelPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface TokenFileReading {
  tokens: readonly KeptToken[];
  /** Lines not taken, by number and why, never their content (it may be a token). */
  problems: string[];
}

const digestOf = (token: string) => createHash('sha256').update(token, 'utf8').digest();

/**
 * `ADMIN_TOKEN_FILE`'s content: one `label:token` a line; blank lines and `#` comments are
 * skipped. The label is what calls are recorded under (the actor), so a token is never written
 * anywhere; several lines let a new token work before the old one is removed.
 */
export function parseTokenFile(content: string): TokenFileReading {
  const tokens: KeptToken[] = [];
  const problems: string[] = [];
  const labels = new Set<string>();
  content.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const at = `line ${index + 1}`;
    const colon = line.indexOf(':');
    const label = colon < 0 ? '' : line.slice(0, colon).trim();
    const token = colon < 0 ? '' : line.slice(colon + 1).trim();
    if (!labelPattern.test(label)) {
      problems.push(
        `${at}: not label:token (a label of letters, digits, '.', '_' or '-', then ':' and the token)`,
      );
      return;
    }
    if (token.length < adminTokenMinLength) {
      problems.push(
        `${at} (${label}): the token is shorter than ${adminTokenMinLength} characters; make one with \`openssl rand -hex 32\``,
      );
      return;
    }
    if (labels.has(label)) problems.push(`${at}: the label ${label} is used twice`);
    labels.add(label);
    tokens.push({ label, digest: digestOf(token) });
  });
  return { tokens, problems };
}

/**
 * The label of the token `presented` is, or null. Every kept token is compared, each in constant
 * time over the SHA-256 of both sides (equal lengths, whatever was sent), and none returns early:
 * a missing, wrong or removed token takes the same work.
 */
export function matchToken(tokens: readonly KeptToken[], presented: string): string | null {
  const digest = digestOf(presented);
  let found: string | null = null;
  for (const token of tokens) {
    if (timingSafeEqual(token.digest, digest) && found === null) found = token.label;
  }
  return found;
}

export interface AdminTokens {
  /** The label of the bearer token in `authorization`, or null. */
  authenticate(authorization: string | undefined): string | null;
  count(): number;
}

/** How often the file is looked at for a change (one stat), at most. */
const recheckMs = 1000;

/**
 * The tokens of `path`, read now and again whenever the file changes (checked at most once a
 * second, when a call comes): a token added is taken, a token removed refused, without a
 * restart. A file that cannot be read keeps no token (every call is refused) until it can.
 */
export function watchTokenFile(
  path: string,
  log: { warn(fields: object, message: string): void },
  first: TokenFileReading,
  now: () => number = () => Date.now(),
  /** The variable naming the file, and what its tokens are, for the log. */
  named = { setting: 'ADMIN_TOKEN_FILE', what: 'admin tokens' },
): AdminTokens {
  let tokens = first.tokens;
  let stamp = fileStamp(path);
  let checkedAt = now();
  const refresh = () => {
    if (now() - checkedAt < recheckMs) return;
    checkedAt = now();
    const current = fileStamp(path);
    if (current === stamp) return;
    stamp = current;
    const reading = readTokenFile(path);
    tokens = reading.tokens;
    for (const problem of reading.problems)
      log.warn({ setting: named.setting }, `${named.what}: ${problem}`);
    log.warn(
      { setting: named.setting, tokens: tokens.length },
      `${named.what} read again: ${tokens.length} in use`,
    );
  };
  return {
    authenticate(authorization) {
      refresh();
      const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
      // No header is compared too, as an empty token: its answer takes the same time.
      return matchToken(tokens, match?.[1] ?? '');
    },
    count: () => tokens.length,
  };
}

function fileStamp(path: string): string {
  try {
    const stat = fs.statSync(path);
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  } catch {
    // Gone or unreadable: a stamp of its own, so its return is noticed.
    return 'none';
  }
}

/** The file read and parsed; a file that cannot be read is one problem and no token. */
export function readTokenFile(path: string): TokenFileReading {
  let content: string;
  try {
    content = fs.readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return { tokens: [], problems: [`cannot read ${path} (${code})`] };
  }
  return parseTokenFile(content);
}
