import type { SessionView } from '../../sessions/user-sessions.js';
import { markup, type SafeHtml } from '../html.js';

/** A live session as the account page lists it (`GET /api/account/sessions`'s entry). */
export type SessionItem = SessionView;

/** An event of the person's history (`GET /api/account/events`'s entry, device as a label). */
export interface HistoryItem {
  type: string;
  at: string;
  ip: string;
  device: string;
  /** An operator did it (their label), not the person. */
  by?: string | undefined;
  /** A refused sign-in's recorded reason and way in, for its words. */
  reason?: string | undefined;
  method?: string | undefined;
}

/** What the sessions and history sections are drawn from (part of the account page's view). */
export interface SecurityView {
  /** Auth.js's CSRF token, for the end buttons. */
  csrfToken: string;
  sessions?: readonly SessionItem[] | undefined;
  events?: readonly HistoryItem[] | undefined;
}

/** Events the page shows; the JSON route lists the whole 90 days. */
export const historyShownMax = 20;

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/** A time as the page shows it: UTC, said so (no script, so no local time zone). */
function when(iso: string): SafeHtml {
  const d = new Date(iso);
  const text = `${d.getUTCDate()} ${months[d.getUTCMonth()] ?? ''} ${d.getUTCFullYear()}, ${two(d.getUTCHours())}:${two(d.getUTCMinutes())} UTC`;
  return markup`<time datetime="${iso}">${text}</time>`;
}

/** Each event type in the person's words; a type not listed here is shown as it is. */
const eventWords: Record<string, string> = {
  signin: 'Signed in',
  throttled: 'Password checks paused after too many wrong passwords',
  signout: 'Signed out',
  session_revoked: 'Sessions signed out',
  password_changed: 'Password changed',
  password_reset: 'Password reset by e-mail',
  email_changed: 'Address changed',
  totp_enabled: 'Authenticator app turned on',
  totp_disabled: 'Authenticator app turned off',
  recovery_code_used: 'Recovery code used',
  second_factor_locked: 'Authenticator codes paused after too many wrong codes',
  passkey_added: 'Passkey added',
  passkey_removed: 'Passkey removed',
  identity_linked: 'Sign-in with a provider added',
  identity_unlinked: 'Sign-in with a provider removed',
  account_locked: 'Account locked',
  account_created: 'Account created',
  session_migrated: 'Signed-in session carried over from the old app',
  access_token_created: 'Access token created',
  access_token_revoked: 'Access token revoked',
  signin_new_device: 'Signed in from a new device and network',
};

/**
 * A refused sign-in in the person's words: what was wrong, as its record says. A wrong code
 * after a right password says so: whoever typed it knows the password.
 */
function failedSignInWords(event: HistoryItem): string {
  if (event.method === 'passkey') return 'A passkey was not accepted';
  if (event.method === 'email') return 'Wrong code from a sign-in mail entered';
  switch (event.reason) {
    case 'second_factor_invalid':
      return 'Right password, but a wrong authenticator code';
    case 'email_code_invalid':
      return 'Right password, but a wrong mailed code to set up two-step sign-in';
    default:
      return 'Wrong password entered';
  }
}

const wordsOf = (event: HistoryItem) =>
  event.type === 'signin_failed'
    ? failedSignInWords(event)
    : (eventWords[event.type] ?? event.type);

const csrfField = (view: SecurityView) =>
  markup`<input type="hidden" name="csrfToken" value="${view.csrfToken}">`;

/** "Where you are signed in": each live session, this one marked, the others each with an end button. */
export function sessionsSection(view: SecurityView, accountPath: string): SafeHtml {
  const sessions = view.sessions ?? [];
  const others = sessions.filter((session) => !session.current).length;
  const items = sessions.map(
    (session) => markup`<li>
<p class="what">${session.device}${session.current && markup` <span class="tag">This one</span>`}</p>
<p class="hint">${session.ip} · signed in ${when(session.createdAt)} with ${session.method} · last seen ${when(session.lastSeenAt)}</p>
${
  !session.current &&
  markup`<form method="post" action="${accountPath}/sessions/${session.id}/revoke">
${csrfField(view)}
<button type="submit" class="secondary">Sign out this session</button>
</form>`
}
</li>
`,
  );
  return markup`<section aria-labelledby="sessions-title">
<h2 id="sessions-title">Where you are signed in</h2>
<ul class="items">
${items}</ul>
${
  others > 0 &&
  markup`<form method="post" action="${accountPath}/sessions/revoke-others">
${csrfField(view)}
<button type="submit" class="secondary">Sign out all other sessions</button>
</form>`
}
</section>`;
}

/** "Security history": the newest events of the last 90 days, with where they came from. */
export function historySection(view: SecurityView): SafeHtml {
  const events = (view.events ?? []).slice(0, historyShownMax);
  const items = events.map((event) => {
    const from =
      event.by !== undefined
        ? markup`by ${event.by}`
        : markup`${event.device}${event.ip !== '' && markup` · ${event.ip}`}`;
    return markup`<li>
<p class="what">${wordsOf(event)}</p>
<p class="hint">${when(event.at)} · ${from}</p>
</li>
`;
  });
  return markup`<section aria-labelledby="history-title">
<h2 id="history-title">Security history</h2>
${
  events.length === 0
    ? markup`<p class="hint">Nothing in the last 90 days.</p>`
    : markup`<ul class="items">
${items}</ul>
<p class="hint after">The last ${events.length} events of the past 90 days. Something you do not recognise? Change your password, then sign out your other sessions.</p>`
}
</section>`;
}
