/** A variable that holds keys (a rotation list: every entry counts) or one secret. */
export interface NamedKeys {
  variable: string;
  /** The current key first; empty when the variable is unset. */
  keys: readonly string[];
  /** How to make a new one, e.g. `generate one with: openssl rand -base64 33`. */
  advice: string;
}

/** Decoded forms shorter than this are no key's material (they only collide by chance). */
const materialMinBytes = 16;

/**
 * The byte strings a key may stand for, as hex: its text as it is, and what it decodes to as
 * hex, base64 or base64url (`whsec_` first taken off). `openssl rand` once, written as base64 for
 * one variable and as hex for another, is the same material: one leaked, both are.
 */
function materialOf(key: string): Set<string> {
  const text = key.startsWith('whsec_') ? key.slice('whsec_'.length) : key;
  const forms = [Buffer.from(key, 'utf8'), Buffer.from(text, 'utf8')];
  if (/^(?:[0-9a-f]{2})+$/i.test(text)) forms.push(Buffer.from(text, 'hex'));
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(text)) forms.push(Buffer.from(text, 'base64'));
  if (/^[A-Za-z0-9_-]+$/.test(text)) forms.push(Buffer.from(text, 'base64url'));
  return new Set(
    forms.filter((form) => form.length >= materialMinBytes).map((form) => form.toString('hex')),
  );
}

function shareMaterial(a: readonly string[], b: readonly string[]): boolean {
  const seen = new Set(a.flatMap((key) => [...materialOf(key)]));
  return b.some((key) => [...materialOf(key)].some((form) => seen.has(form)));
}

export interface KeyReuse {
  /** A variable's current key (its first) is another's: refused in production. */
  refused: string[];
  /** Only an older key of a rotation list is: kept to open what it sealed, said at start. */
  rotating: string[];
}

/**
 * Each pair of variables that hold the same key, or keys made of the same bytes, worded for the
 * operator, the later variable of the list named first (the one to change). Every key has its
 * own job and its own reach (AUTH_SECRET is shared with the applications that read the session
 * cookie; WEBHOOK_SECRET with the receiver), so one reused is leaked with the other. When only
 * an older key of the later list matches, a rotation away from the shared key is under way: the
 * old key still opens what it sealed until it is dropped.
 */
export function keyReuse(named: readonly NamedKeys[]): KeyReuse {
  const found: KeyReuse = { refused: [], rotating: [] };
  named.forEach((later, index) => {
    for (const earlier of named.slice(0, index)) {
      if (!shareMaterial(earlier.keys, later.keys)) continue;
      const same = `${later.variable}: holds the same key as ${earlier.variable} (or one made of the same bytes)`;
      if (shareMaterial(earlier.keys, later.keys.slice(0, 1)))
        found.refused.push(
          `${same}; each must be a key of its own, since whoever holds ${earlier.variable} would hold ${later.variable} too: ${later.advice}`,
        );
      else
        found.rotating.push(
          `${same} in an older entry of its list: it still opens what that key sealed, so drop it from ${later.variable} as soon as nothing needs it`,
        );
    }
  });
  return found;
}
