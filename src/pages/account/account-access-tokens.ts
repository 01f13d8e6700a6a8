import {
  csrfField,
  currentPasswordField,
  day,
  fieldState,
  formNotice,
  type FormView,
} from './account-form-kit.js';
import { markup, type SafeHtml } from '../html.js';

/*
 * The account page's access tokens: what they are for, the live ones (each with its dates and a
 * revoke button), the create form (a name and an expiry; the current password unless the
 * session is recent), and a token just made, shown this once in the answer to its own post.
 */

/** A live access token as the page lists it (`GET /api/account/tokens`'s entries). */
export interface AccessTokenRow {
  id: string;
  name: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

/** A token just made (`POST /api/account/tokens`'s answer): its secret is shown this once. */
export interface NewAccessToken {
  name: string;
  token: string;
  expiresAt: string | null;
}

export interface AccessTokensView {
  rows: readonly AccessTokenRow[];
  /** Made by the post this page answers; never kept anywhere the page could show it again. */
  made?: NewAccessToken | undefined;
}

/** What the section needs of the page: its forms, whether to ask the password, the token route. */
export interface AccessTokensPageView extends FormView {
  /** The session may use (recent) routes now: no password asked for. */
  recent?: boolean;
  /** `GET /api/auth/token` under Auth.js's base path: where a script trades its token. */
  tokenRoute: string;
}

/** The expiries a new token may be given, in days ('': none), shortest first. */
const expiries: readonly [value: string, label: string][] = [
  ['7', '7 days'],
  ['30', '30 days'],
  ['90', '90 days'],
  ['365', '1 year'],
  ['', 'No expiry'],
];
const defaultExpiry = '90';

const expiry = (expiresAt: string | null) =>
  expiresAt === null ? 'never expires' : `expires ${day(expiresAt)}`;

/** The token just made: a read-only field to copy it from, focused (the page opens at it). */
function madePart(made: NewAccessToken, tokenRoute: string): SafeHtml {
  // A text area, wrapped anywhere, so the whole token shows on a phone too. Not in a form (never
  // posted), no spellcheck (a browser's online spellcheck would send it away). A token has no
  // break, so a double click or a long press selects it whole.
  return markup`<div class="once">
<p><strong>Your new access token "${made.name}"</strong> (${expiry(made.expiresAt)}). Copy it now: it is not shown again.</p>
<label for="newAccessToken">Access token</label>
<textarea id="newAccessToken" class="secret" rows="2" readonly autofocus autocomplete="off" spellcheck="false">${made.token}</textarea>
<p class="hint after">Your script sends it as <code>Authorization: Bearer …</code> to <code>GET ${tokenRoute}</code>.</p>
</div>`;
}

function rowsPart(view: AccessTokensPageView, rows: readonly AccessTokenRow[]): SafeHtml {
  if (rows.length === 0) return markup`<p class="hint">No access tokens.</p>`;
  const items = rows.map((row) => {
    const used = row.lastUsedAt === null ? 'never used' : `last used ${day(row.lastUsedAt)}`;
    return markup`<li>
<p class="what">${row.name}</p>
<p class="hint">Created ${day(row.createdAt)} · ${expiry(row.expiresAt)} · ${used}</p>
<form method="post" action="${view.accountPath}/tokens/revoke">
${csrfField(view)}
<input type="hidden" name="id" value="${row.id}">
<button type="submit" class="secondary" aria-label="Revoke ${row.name}">Revoke</button>
</form>
</li>
`;
  });
  return markup`<ul class="items">
${items}</ul>`;
}

function createForm(view: AccessTokensPageView): SafeHtml {
  const sent = view.sent?.form === 'access-token-create' ? view.sent : undefined;
  const chosen = sent?.values.expiresInDays ?? defaultExpiry;
  const options = expiries.map(
    ([value, label]) =>
      markup`<option value="${value}"${value === chosen && markup` selected`}>${label}</option>`,
  );
  const state = (field: string) => fieldState(view, 'access-token-create', field);
  return markup`<details${sent !== undefined && markup` open`}>
<summary>Create an access token</summary>
<form method="post" action="${view.accountPath}/tokens">
${csrfField(view)}
${formNotice(view, 'access-token-create')}
<label for="accessTokenName">Name <span class="hint">(what it is for)</span></label>
<input id="accessTokenName" name="name" type="text" maxlength="200" required placeholder="Nightly export" value="${sent?.values.name ?? ''}"${state('name')}>
<label for="accessTokenExpiry">Expires after</label>
<select id="accessTokenExpiry" name="expiresInDays"${state('expiresInDays')}>
${options}
</select>
${view.recent !== true && currentPasswordField(view, 'access-token-create', 'accessTokenPassword', sent !== undefined)}
<button type="submit">Create token</button>
</form>
<p class="hint after">The token is shown once, right after it is made. Signing out your other sessions, a new password or address, and locking your account end every token.</p>
</details>`;
}

/**
 * Access tokens: for scripts and other backends, which trade one at `GET /api/auth/token` for a
 * short-lived token; never for this page or the account's routes. Plain forms, no script.
 */
export function accessTokensSection(
  view: AccessTokensPageView,
  tokens: AccessTokensView,
): SafeHtml {
  return markup`<section aria-labelledby="tokens-title">
<h2 id="tokens-title">Access tokens</h2>
${tokens.made !== undefined && madePart(tokens.made, view.tokenRoute)}
<p>For scripts and other backends that act as you: they trade a token at <code>GET ${view.tokenRoute}</code> for a short-lived one. A token never opens this page or changes your account.</p>
${rowsPart(view, tokens.rows)}
${createForm(view)}
</section>`;
}
