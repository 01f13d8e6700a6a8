import { loadKeys, rotateKey } from '../../tokens/key-store.js';
import type { CliContext } from '../context.js';
import { CliError } from '../prompt.js';

export const rotateHelp = `Usage: gatehouse tokens rotate-key [--now]

Makes a new key for signing session tokens (GET /api/auth/token). It is published in the key
set (/api/auth/jwks.json) at once and signs 6 minutes later, when every cached copy of the key
set holds it; the keys before it stay published until the last token they signed has expired
(TOKEN_TTL, and a minute for clocks), then leave the set. Nothing is restarted: every instance
reads the keys again within a minute.

--now: the new key signs at once and the old keys leave the key set at once, so every token
they signed stops verifying: for a key that leaked. Give the command the service's AUTH_SECRET
(the keys are sealed with it) and TOKEN_TTL.`;

export const keysHelp = `Usage: gatehouse tokens keys [--json]

Lists the keys session tokens are signed with: each key's id (the tokens' kid), when it was
made, when it signs from and until when it is published.`;

const iso = (ms: number | null) => (ms === null ? 'while newest' : new Date(ms).toISOString());

function sealingSecrets(context: CliContext): readonly string[] {
  if (context.config.tokens.signingKeyPem !== undefined)
    throw new CliError(
      'TOKEN_SIGNING_KEY is set: the signing keys are that file’s, not the database’s; to rotate, add the new key as the file’s second key, restart every instance, after 6 minutes make it the first, and remove the old one after TOKEN_TTL',
    );
  if (context.config.authSecrets.length === 0)
    throw new CliError(
      'AUTH_SECRET is not set here: the keys are sealed with the service’s AUTH_SECRET; run this with the service’s settings',
    );
  return context.config.authSecrets;
}

export async function rotate(
  context: CliContext,
  values: Record<string, string | boolean | undefined>,
): Promise<void> {
  const secrets = sealingSecrets(context);
  const done = await rotateKey(
    context.db,
    { secrets, ttlSeconds: context.config.tokens.ttlSeconds, immediately: values.now === true },
    Date.now(),
  );
  context.out(
    values.now === true
      ? `new signing key ${done.kid}: signs now; the old keys were withdrawn (their tokens no longer verify)`
      : `new signing key ${done.kid}: published now, signs from ${iso(done.signsFrom)}; the old keys are published until ${iso(done.retiredAt)}`,
  );
}

export async function keys(
  context: CliContext,
  values: Record<string, string | boolean | undefined>,
): Promise<void> {
  const secrets = sealingSecrets(context);
  const now = Date.now();
  const kept = await loadKeys(context.db, secrets, now);
  const rows = kept.map((key) => ({
    kid: key.kid,
    alg: key.publicJwk.alg,
    createdAt: new Date(key.createdAt).toISOString(),
    signsFrom: new Date(key.signsFrom).toISOString(),
    publishedUntil: key.publishedUntil === null ? null : new Date(key.publishedUntil).toISOString(),
    opens: key.material !== null,
  }));
  if (values.json === true) {
    context.out(JSON.stringify(rows));
    return;
  }
  if (rows.length === 0) {
    context.out('no signing key yet: the service makes one at the first token it signs');
    return;
  }
  for (const row of rows)
    context.out(
      `${row.kid}  ${row.alg}  made ${row.createdAt}  signs from ${row.signsFrom}  published until ${row.publishedUntil ?? 'a newer key signs'}${row.opens ? '' : '  (AUTH_SECRET here does not open it)'}`,
    );
}
