import type { AccountForm } from './account-notices.js';
import { csrfField, currentPasswordField, formNotice, type FormView } from './account-form-kit.js';
import { markup, type SafeHtml } from '../html.js';

/** An identity as the page lists it (`GET /api/account/identities`'s entries, named). */
export interface IdentityRow {
  id: string;
  /** The provider's id and its name as configured (`GitHub`, `Acme SSO`). */
  provider: string;
  providerName: string;
  email: string | null;
  linkedAt: string;
}

/** The identities section: what is linked, and the providers that may be linked. */
export interface IdentitiesView {
  rows: readonly IdentityRow[];
  /** Every configured provider: a link button each (Auth.js's `signin/{id}` post). */
  providers: readonly { id: string; name: string }[];
}

interface PlacedForm extends FormView {
  /** Auth.js's base path (`/api/auth`): the link buttons post there. */
  authPath: string;
  recent?: boolean | undefined;
}

const day = (iso: string) => iso.slice(0, 10);

/**
 * "Sign-in with other services": each linked identity with its unlink form (the current
 * password asked for unless the session is recent; an account without a password signs in
 * again instead), and a button per provider that starts linking, which needs a recent
 * sign-in (otherwise the provider's sign-in asks for this account's proof first).
 */
export function identitiesSection(view: PlacedForm, identities: IdentitiesView): SafeHtml {
  const sent = view.sent;
  const askPassword = view.recent !== true;
  const rows = identities.rows.map((identity) => {
    const refused = (form: AccountForm) => sent?.form === form && sent.values.id === identity.id;
    const unlinking = refused('identity-unlink');
    const password = `unlink-password-${identity.id}`;
    return markup`<li>
<p class="fact"><span class="label">${identity.providerName}</span> <span class="hint">${identity.email ?? 'no address given'} · linked ${day(identity.linkedAt)}</span></p>
<details${unlinking && markup` open`}>
<summary>Unlink<span hidden> ${identity.providerName}</span></summary>
<form method="post" action="${view.accountPath}/identities/unlink">
${csrfField(view)}
${unlinking && formNotice(view, 'identity-unlink')}
<input type="hidden" name="id" value="${identity.id}">
${askPassword && currentPasswordField(view, 'identity-unlink', password, unlinking)}
<button type="submit" class="secondary">Unlink ${identity.providerName}</button>
</form>
</details>
</li>`;
  });
  const list =
    rows.length === 0
      ? markup`<p class="hint">None linked yet. Link one to sign in with it instead of your password.</p>`
      : markup`<ul class="passkeys">
${rows.map((row) => markup`${row}\n`)}</ul>`;
  // One identity per provider is what people expect: a linked provider offers no second link.
  const linked = new Set(identities.rows.map((row) => row.provider));
  const buttons = identities.providers
    .filter((provider) => !linked.has(provider.id))
    .map(
      (provider) => markup`<form method="post" action="${view.authPath}/signin/${provider.id}">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="callbackUrl" value="${view.accountPath}">
<input type="hidden" name="intent" value="link">
<button type="submit" class="secondary">Link ${provider.name}</button>
</form>`,
    );
  return markup`<section aria-labelledby="identities-title">
<h2 id="identities-title">Sign-in with other services</h2>
${list}
${buttons}
</section>`;
}
