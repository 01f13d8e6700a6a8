// The load generator: a steady stream through nginx of session reads with a few signed-in
// cookies, and a minority of full sign-ins (each: CSRF token, credentials post, a read of the
// new session), every request on its own connection. Each request is recorded (start, end,
// outcome, which instances nginx tried) so a scenario can say which failed and where.
import type { Fleet } from './fleet.ts';
import {
  Client,
  field,
  parseJson,
  request,
  sessionCookieName,
  sessionEmailOf,
  type Answer,
} from './http.ts';
import { sleep } from './processes.ts';

export interface LoadOptions {
  readers?: number;
  signers?: number;
  readPauseMs?: number;
  signPauseMs?: number;
}

export interface LoadRecord {
  kind: 'session' | 'csrf' | 'signin' | 'session-new';
  start: number;
  end: number;
  status: number;
  upstream: string;
  ok: boolean;
  reason: string | undefined;
}

/** A signed-in cookie and whose it is. */
export interface LoadSession {
  email: string;
  cookie: string;
}

export interface Summary {
  total: number;
  failed: number;
  byKind: Partial<Record<LoadRecord['kind'], { total: number; failed: number }>>;
  failures: LoadRecord[];
  records: LoadRecord[];
}

export interface Load {
  /** Every request so far, as it ended. */
  readonly records: LoadRecord[];
  /** Sessions made by the load's sign-ins. */
  readonly created: (LoadSession & { at: number })[];
  stop(): Promise<Summary>;
}

export const loadReaderEmail = 'load-reader@example.com';
export const loadSignerEmail = 'load-signer@example.com';
export const loadPassword = 'a steady stream of sign-ins';

/** Adds the load's two users and signs the reader in `cookies` times (through `origin`). */
export async function prepareLoad(fleet: Fleet, cookies = 4): Promise<LoadSession[]> {
  await Promise.all([
    fleet.addUser(loadReaderEmail, loadPassword),
    fleet.addUser(loadSignerEmail, loadPassword),
  ]);
  const sessions: LoadSession[] = [];
  for (let i = 0; i < cookies; i += 1) {
    const client = new Client(fleet.origin);
    const result = await client.signIn(loadReaderEmail, loadPassword);
    if (result.outcome !== 'signed-in') throw new Error(`load reader sign-in: ${result.outcome}`);
    sessions.push({ email: loadReaderEmail, cookie: client.cookies.get(sessionCookieName) ?? '' });
  }
  return sessions;
}

function failureReason(response: Answer, expected: number): string | undefined {
  if (response.status === 0) return `no answer: ${response.error}`;
  if (response.status !== expected) return `status ${response.status}`;
  return undefined;
}

/**
 * Starts `readers` loops of session reads (each pausing `readPauseMs` between requests) and
 * `signers` loops of sign-ins (pausing `signPauseMs`) against `origin`. `stop()` ends the loops,
 * waits for the requests in flight, and resolves to the records.
 */
export function startLoad({
  origin,
  sessions,
  readers = 6,
  signers = 1,
  readPauseMs = 10,
  signPauseMs = 100,
}: LoadOptions & { origin: string; sessions: LoadSession[] }): Load {
  const records: LoadRecord[] = [];
  const created: Load['created'] = [];
  let running = true;
  const timed = async (
    kind: LoadRecord['kind'],
    send: () => Promise<Answer>,
    judge: (response: Answer) => string | undefined,
  ) => {
    const start = Date.now();
    const response = await send();
    const reason = failureReason(response, 200) ?? judge(response);
    records.push({
      kind,
      start,
      end: Date.now(),
      status: response.status,
      upstream: response.upstream,
      ok: reason === undefined,
      reason,
    });
    return { response, ok: reason === undefined };
  };

  const readLoop = async (offset: number) => {
    for (let i = offset; running; i += 1) {
      const session = sessions[i % sessions.length] as LoadSession;
      await timed(
        'session',
        () =>
          request(`${origin}/api/auth/session`, {
            headers: { cookie: `${sessionCookieName}=${session.cookie}` },
          }),
        (response) => {
          const email = sessionEmailOf(parseJson(response.body));
          return email === session.email ? undefined : `session read as ${String(email ?? 'null')}`;
        },
      );
      await sleep(readPauseMs);
    }
  };

  const signLoop = async () => {
    while (running) {
      const client = new Client(origin);
      const csrf = await timed(
        'csrf',
        () => client.send('/api/auth/csrf'),
        (response) =>
          typeof field(parseJson(response.body), 'csrfToken') === 'string'
            ? undefined
            : 'no csrf token',
      );
      if (csrf.ok) {
        const token = field(parseJson(csrf.response.body), 'csrfToken') as string;
        const signIn = await timed(
          'signin',
          () =>
            client.postForm(
              '/api/auth/callback/credentials',
              { csrfToken: token, email: loadSignerEmail, password: loadPassword },
              { 'x-auth-return-redirect': '1' },
            ),
          (response) => {
            const url = field(parseJson(response.body), 'url');
            if (typeof url !== 'string') return 'no url';
            const code = new URL(url).searchParams.get('code');
            if (code !== null) return `refused: ${code}`;
            return client.cookies.has(sessionCookieName) ? undefined : 'no session cookie';
          },
        );
        if (signIn.ok) {
          const cookie = client.cookies.get(sessionCookieName) ?? '';
          created.push({ at: Date.now(), cookie, email: loadSignerEmail });
          await timed(
            'session-new',
            () => client.send('/api/auth/session'),
            (response) => {
              const email = sessionEmailOf(parseJson(response.body));
              return email === loadSignerEmail
                ? undefined
                : `new session read as ${String(email ?? 'null')}`;
            },
          );
        }
      }
      await sleep(signPauseMs);
    }
  };

  const loops = [
    ...Array.from({ length: readers }, (_, i) => readLoop(i)),
    ...Array.from({ length: signers }, () => signLoop()),
  ];
  return {
    records,
    created,
    async stop() {
      running = false;
      await Promise.all(loops);
      return summarise(records);
    },
  };
}

/** Totals and failures, overall and per kind of request. */
export function summarise(records: LoadRecord[]): Summary {
  const byKind: Summary['byKind'] = {};
  for (const record of records) {
    const kind = (byKind[record.kind] ??= { total: 0, failed: 0 });
    kind.total += 1;
    if (!record.ok) kind.failed += 1;
  }
  const failures = records.filter((record) => !record.ok);
  return { total: records.length, failed: failures.length, byKind, failures, records };
}

/** Whether nginx tried the instance on `port` for this request. */
export const triedPort = (record: LoadRecord, port: number): boolean =>
  record.upstream.split(/[,:\s]+/).includes(String(port));
